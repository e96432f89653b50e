package resumable

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// ParseEncryptionKey decodes a customer-supplied key as gcloud and gsutil take it: 32
// bytes in base64 (standard or URL alphabet; surrounding space ignored), e.g. from
// 'openssl rand -base64 32'. The error never quotes the text: it is a secret.
func ParseEncryptionKey(s string) (EncryptionKey, error) {
	s = strings.TrimSpace(s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.URLEncoding.DecodeString(s)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("not base64 (a key is 32 random bytes in base64, e.g. from 'openssl rand -base64 32', or a Cloud KMS key name)")
	case len(b) != 32:
		return nil, fmt.Errorf("an AES-256 key is 32 bytes, this one decodes to %d", len(b))
	}
	return EncryptionKey(b), nil
}

// ParseEncryptionKeys decodes a list of keys (ParseEncryptionKey), separated by commas
// or lines, as a key file or gcloud's --decryption-keys holds them; blank entries and
// lines beginning with # are skipped. An error names the key by its place in the list
// ("key 2: ..."), never by its text. No key at all is an empty list, not an error.
func ParseEncryptionKeys(s string) ([]EncryptionKey, error) {
	var keys []EncryptionKey
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, t := range strings.Split(line, ",") {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			k, err := ParseEncryptionKey(t)
			if err != nil {
				return nil, fmt.Errorf("key %d: %w", len(keys)+1, err)
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}

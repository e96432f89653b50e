package fakegcs

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// Customer-supplied encryption keys (CSEK). A request names its key with
// three headers: X-Goog-Encryption-Algorithm (AES256), -Key (the 32-byte
// key, base64) and -Key-Sha256 (its SHA256, base64); a copy or rewrite
// names its source's key with X-Goog-Copy-Source-Encryption-*. GCS keeps
// only the key's SHA256 with the object, and so does fakegcs: the stored
// bytes are not encrypted, but every read, compose and rewrite of the
// object must carry the key whose hash was stored, and is refused with
// GCS's 400 otherwise (cloud.google.com/storage/docs/json_api/v1/status-codes).
const (
	keyHeaders       = "X-Goog-Encryption-"
	sourceKeyHeaders = "X-Goog-Copy-Source-Encryption-"
)

var (
	errKeyRequired = errf(400, "resourceIsEncryptedWithCustomerEncryptionKey",
		"The target object is encrypted by a customer-supplied encryption key.")
	errSourceKeyRequired = errf(400, "resourceIsEncryptedWithCustomerEncryptionKey",
		"The source object is encrypted by a customer-supplied encryption key.")
	errKeyIncorrect = errf(400, "customerEncryptionKeyIsIncorrect",
		"The provided encryption key is incorrect.")
	errKeyUnexpected = errf(400, "resourceNotEncryptedWithCustomerEncryptionKey",
		"The target object is not encrypted by a customer-supplied encryption key.")
	errKeyAlgorithm = errf(400, "customerEncryptionAlgorithmIsInvalid",
		"Missing an encryption algorithm, or the provided algorithm is not \"AES256\".")
	errKeyFormat = errf(400, "customerEncryptionKeyFormatIsInvalid",
		"Missing an encryption key, or it is not Base64 encoded, or it does not meet the required length of the encryption algorithm.")
	errKeySHA = errf(400, "customerEncryptionKeySha256IsInvalid",
		"Missing a SHA256 hash of the encryption key, or it is not Base64 encoded, or it does not match the encryption key.")
	errKeyAndKMS = errf(400, "invalid",
		"A customer-supplied encryption key and a Cloud KMS key (kmsKeyName) cannot both be given.")
)

// requestKey reads the key a request carries under the headers prefix
// (keyHeaders or sourceKeyHeaders) and returns its SHA256 in base64, or ""
// when the request carries none. A malformed key is GCS's 400.
func requestKey(h http.Header, prefix string) (string, *apiError) {
	alg, key, sum := h.Get(prefix+"Algorithm"), h.Get(prefix+"Key"), h.Get(prefix+"Key-Sha256")
	if alg == "" && key == "" && sum == "" {
		return "", nil
	}
	if alg != "AES256" {
		return "", errKeyAlgorithm
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		return "", errKeyFormat
	}
	got := sha256.Sum256(raw)
	want, err := base64.StdEncoding.DecodeString(sum)
	if err != nil || subtle.ConstantTimeCompare(got[:], want) != 1 {
		return "", errKeySHA
	}
	return base64.StdEncoding.EncodeToString(got[:]), nil
}

// checkKey says whether a request that carries the key sent (its SHA256,
// "" for none) may read an object whose key hash is stored (""
// for an object without a CSEK). missing is the error for a key not sent.
// A key sent for an object that has none is refused, as GCS refuses it.
func checkKey(sent, stored string, missing *apiError) *apiError {
	switch {
	case stored == "" && sent != "":
		return errKeyUnexpected
	case stored == "":
		return nil
	case sent == "":
		return missing
	case sent != stored:
		return errKeyIncorrect
	}
	return nil
}

// readKey checks the key of a request that reads an object's content.
func (x *exchange) readKey(a *ObjectAttrs) *apiError {
	sent, apiErr := requestKey(x.r.Header, keyHeaders)
	if apiErr != nil {
		return apiErr
	}
	return checkKey(sent, a.CustomerKeySHA256, errKeyRequired)
}

// sessionKey checks a key sent to an upload session: it must be the one
// the session was started with. A request without one is served, as GCS
// serves the official Go client's chunks, which carry the key in the
// initiation only.
func (x *exchange) sessionKey(a *ObjectAttrs) *apiError {
	sent, apiErr := requestKey(x.r.Header, keyHeaders)
	if apiErr != nil || sent == "" {
		return apiErr
	}
	return checkKey(sent, a.CustomerKeySHA256, errKeyRequired)
}

// metadataKey decides what a metadata read of a may show: GCS serves a
// CSEK object's metadata without the key, but not its hashes (gsutil shows
// them as "encrypted"); a key that is sent must be the right one.
func (x *exchange) metadataKey(a *ObjectAttrs) (showHashes bool, apiErr *apiError) {
	sent, apiErr := requestKey(x.r.Header, keyHeaders)
	if apiErr != nil || a.CustomerKeySHA256 == "" {
		return true, apiErr
	}
	if sent == "" {
		return false, nil
	}
	if sent != a.CustomerKeySHA256 {
		return false, errKeyIncorrect
	}
	return true, nil
}

// copySourceKey checks that a copy or rewrite carries the key of its source
// (X-Goog-Copy-Source-Encryption-*), and returns the key its destination is
// to be encrypted with (X-Goog-Encryption-*: its SHA256, "" for none) and
// the Cloud KMS key it names (destinationKmsKeyName). A destination without
// a key of its own is not encrypted with the source's: GCS encrypts it with
// Google's keys (or the bucket's default KMS key).
func copySourceKey(r *http.Request, src *ObjectAttrs) (dstSHA, dstKMS string, apiErr *apiError) {
	sent, apiErr := requestKey(r.Header, sourceKeyHeaders)
	if apiErr == nil {
		apiErr = checkKey(sent, src.CustomerKeySHA256, errSourceKeyRequired)
	}
	if apiErr == nil {
		dstSHA, apiErr = requestKey(r.Header, keyHeaders)
	}
	dstKMS = r.URL.Query().Get("destinationKmsKeyName")
	if apiErr == nil && dstSHA != "" && dstKMS != "" {
		apiErr = errKeyAndKMS
	}
	return dstSHA, dstKMS, apiErr
}

// newObjectKeys reads the encryption an insert or a resumable initiation
// asks for: a CSEK (its SHA256) or a Cloud KMS key name, not both.
func newObjectKeys(x *exchange, a *ObjectAttrs) *apiError {
	sha, apiErr := requestKey(x.r.Header, keyHeaders)
	if apiErr != nil {
		return apiErr
	}
	kms := x.r.URL.Query().Get("kmsKeyName")
	if sha != "" && kms != "" {
		return errKeyAndKMS
	}
	a.CustomerKeySHA256, a.KMSKeyName = sha, kms
	return nil
}

// customerEncryption is the Object resource's customerEncryption member.
type customerEncryption struct {
	EncryptionAlgorithm string `json:"encryptionAlgorithm"`
	KeySha256           string `json:"keySha256"`
}

// hideHashes removes what GCS does not show of a CSEK object to a request
// without its key.
func hideHashes(o *objectResource) {
	o.Md5Hash, o.Crc32c = "", ""
}

package main

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/internal/keysource"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// keyFlags are gcloud's encryption options and the billing project, shared by every
// command that talks to GCS. A key's text is a secret: no message here ever quotes it.
type keyFlags struct {
	encryptionKey      string // --encryption-key: base64 AES-256 key, or a Cloud KMS key name
	encryptionKeyFile  string // --encryption-key-file: the same, read from a file
	decryptionKeys     string // --decryption-keys: comma-separated base64 keys
	decryptionKeysFile string // --decryption-keys-file: one key per line
	billingProject     string // --billing-project, -u: the project billed (userProject)

	resolved keys     // filled by check
	fs       *flagSet // the set registered with, to tell "--encryption-key ''" from no flag
}

// keys are the keys the flags (or their files, or the environment) name.
type keys struct {
	encryption resumable.EncryptionKey
	kms        string
	decryption []resumable.EncryptionKey
}

const (
	envEncryptionKey  = "GCSPUT_ENCRYPTION_KEY"
	envDecryptionKeys = "GCSPUT_DECRYPTION_KEYS"
)

func (k *keyFlags) register(fs *flagSet) {
	k.fs = fs
	defer fs.Group(fs.Group("Encryption"))
	fs.String(&k.encryptionKey, "encryption-key", "", "KEY",
		"CSEK or Cloud KMS key for new objects (seen in 'ps')\n"+
			"encrypt new objects with this customer-supplied key (base64 AES-256, 32 bytes) or Cloud KMS key "+
			"(projects/P/locations/L/keyRings/R/cryptoKeys/K); it also reads objects written with it. "+
			"A key on the command line is visible to every user in 'ps': prefer --encryption-key-file or $"+envEncryptionKey)
	fs.String(&k.encryptionKeyFile, "encryption-key-file", "", "FILE",
		"read --encryption-key from FILE (keep it mode 0600)")
	fs.String(&k.decryptionKeys, "decryption-keys", "", "KEY,...",
		"CSEKs to read objects with (seen in 'ps')\n"+
			"base64 AES-256 keys to read objects with, each object with the key whose SHA256 its metadata names "+
			"(visible in 'ps' too: prefer --decryption-keys-file or $"+envDecryptionKeys+", comma-separated)")
	fs.String(&k.decryptionKeysFile, "decryption-keys-file", "", "FILE",
		"read decryption keys from FILE, one a line\n"+
			"read decryption keys from FILE, one per line (blank lines and # comments skipped)")
	fs.Group("Connection")
	fs.String(&k.billingProject, "billing-project", "u", "PROJECT",
		"bill PROJECT for requests (requester pays)\n"+
			"bill PROJECT for every request (userProject), as a requester-pays bucket requires; gsutil's -u")
}

// check reads the keys from the flags, else their files, else the environment. A key
// given but empty (the flag with an empty value, an empty key file, the variable set
// to "") is refused: it is a failed 'openssl rand > key' or an empty secret, and taken as
// "no key" it would write objects unencrypted.
func (k *keyFlags) check() error {
	enc, err := k.oneSource("encryption-key", k.encryptionKey, k.encryptionKeyFile, envEncryptionKey)
	if err != nil {
		return err
	}
	if enc.Given {
		if strings.TrimSpace(enc.Text) == "" {
			return usagef("%s: give the key (base64 AES-256 or a Cloud KMS key name), or leave the option out for no key", enc.Empty)
		}
		if err := k.resolved.setEncryption(enc.Text); err != nil {
			return err
		}
	}
	dec, err := k.oneSource("decryption-keys", k.decryptionKeys, k.decryptionKeysFile, envDecryptionKeys)
	if err != nil {
		return err
	}
	if k.resolved.decryption, err = resumable.ParseEncryptionKeys(dec.Text); err != nil {
		return usagef("--decryption-keys: %v", err)
	}
	if dec.Given && len(k.resolved.decryption) == 0 {
		return usagef("%s: give the keys (base64 AES-256, comma-separated or one per line), or leave the option out", dec.Empty)
	}
	if k.fs.Given("billing-project") && strings.TrimSpace(k.billingProject) == "" {
		// Empty, it would bill no one: a requester-pays bucket refuses, another bills its owner.
		return usagef("--billing-project is empty: name the project to bill (a project ID), or leave the option out")
	}
	if strings.HasPrefix(k.billingProject, "-") {
		return usagef("--billing-project needs a project ID, got the flag-like %q", k.billingProject)
	}
	return nil
}

// oneSource is a key option's text, read the one way it was given (keysource.Option).
func (k *keyFlags) oneSource(name, flagValue, file, env string) (keysource.Source, error) {
	src, err := keysource.Option{Name: name, Value: flagValue, Given: k.fs.Given(name),
		File: file, FileGiven: k.fs.Given(name + "-file"), Env: env}.Read(nil)
	if err != nil {
		return src, usagef("%v", err)
	}
	return src, nil
}

// setEncryption takes --encryption-key: a Cloud KMS key name or a CSEK.
func (k *keys) setEncryption(s string) error {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "projects/") {
		if !strings.Contains(s, "/cryptoKeys/") || strings.ContainsAny(s, " \t\n") {
			return usagef("--encryption-key: a Cloud KMS key name is projects/P/locations/L/keyRings/R/cryptoKeys/K")
		}
		k.kms = s
		return nil
	}
	key, err := resumable.ParseEncryptionKey(s)
	if err != nil {
		return usagef("--encryption-key: %v", err)
	}
	k.encryption = key
	return nil
}

// apply puts the keys and the billing project into a client's options.
func (k *keyFlags) apply(o *upload.Options) {
	o.EncryptionKey, o.KMSKeyName = k.resolved.encryption, k.resolved.kms
	o.DecryptionKeys, o.UserProject = k.resolved.decryption, k.billingProject
}

// hoistGlobals moves gsutil's global "-u PROJECT" (and --billing-project) given before the
// command word behind it, where the command's flags are parsed: 'gcsput -u P cp ...'.
func hoistGlobals(args []string) (globals, rest []string) {
	for len(args) > 0 {
		a := args[0]
		switch {
		case (a == "-u" || a == "--billing-project" || a == "-billing-project") && len(args) > 1:
			globals, args = append(globals, a, args[1]), args[2:]
		case strings.HasPrefix(a, "--billing-project=") || strings.HasPrefix(a, "-u="):
			globals, args = append(globals, a), args[1:]
		default:
			return globals, args
		}
	}
	return globals, args
}

// requesterPaysError is the one error a command without --billing-project reports for a
// requester-pays bucket, however many of its transfers met it: the fix is the same flag.
func requesterPaysError(err error, transfers int) error {
	var cause string
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Message != "" {
		cause = ": GCS said \"" + ge.Message + "\""
	}
	what := "the bucket"
	if transfers > 1 {
		what = fmt.Sprintf("the bucket of these %d transfers", transfers)
	}
	return usagef("%s is requester pays: name the project to bill with --billing-project PROJECT (gsutil's -u PROJECT)%s", what, cause)
}

// billing takes a result refused for want of a billing project out of the per-file
// report (returning true): the job reports it once, at its end.
func (j *job) billing(r *upload.Result) bool {
	if !errors.Is(r.Err, upload.ErrUserProjectMissing) {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.noBilling == nil {
		j.noBilling = r.Err
	}
	j.billed++
	return true
}

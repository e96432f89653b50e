package main

import (
	"strings"
	"testing"
)

// A key given but empty is a usage error, exit 2, with nothing sent: the flag with an
// empty value, an empty (or blank, or comments-only) key file, the environment variable
// set but empty. Taken as "no key", the object went up unencrypted with exit 0.
func TestEmptyKeyIsUsageError(t *testing.T) {
	e := newE2E(t)
	e.write("f.txt", 100)
	empty := e.keyFile("empty.key", "")
	comments := e.keyFile("comments.keys", "# no keys yet\n\n")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--encryption-key", ""}, "--encryption-key is empty: give the key (base64 AES-256 or a Cloud KMS key name), or leave the option out for no key"},
		{nil, []string{"--encryption-key="}, "--encryption-key is empty: give the key"},
		{nil, []string{"--encryption-key", " \n"}, "--encryption-key is empty: give the key"},
		{nil, []string{"--encryption-key-file", empty}, "--encryption-key-file " + empty + " is empty: give the key"},
		{nil, []string{"--encryption-key-file", ""}, "--encryption-key-file needs a file name"},
		{[]string{envEncryptionKey + "="}, nil, "$" + envEncryptionKey + " is set but empty: give the key"},
		{nil, []string{"--decryption-keys", ""}, "--decryption-keys is empty: give the keys"},
		{nil, []string{"--decryption-keys", " , "}, "--decryption-keys is empty: give the keys"},
		{nil, []string{"--decryption-keys-file", comments}, "--decryption-keys-file " + comments + " is empty: give the keys"},
		{[]string{envDecryptionKeys + "= "}, nil, "$" + envDecryptionKeys + " is set but empty: give the keys"},
		// A billing project given but empty would bill no one, as if none was given.
		{nil, []string{"--billing-project", ""}, "--billing-project is empty: name the project to bill (a project ID), or leave the option out"},
		{nil, []string{"-u", " "}, "--billing-project is empty: name the project to bill"},
	} {
		args := append([]string{"cp", fastRetry, "f.txt", "gs://bkt/f.txt"}, tc.args...)
		r := e.runEnv(tc.env, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v %v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.env, tc.args, r.code, r.stderr, exitUsage, tc.want)
		}
	}
	if st := e.srv.Stats(); len(st.Requests) != 0 {
		t.Errorf("requests reached the server: %v", st.Requests)
	}
	if _, _, err := e.srv.Object("bkt", "f.txt"); err == nil {
		t.Error("gs://bkt/f.txt was created")
	}
}

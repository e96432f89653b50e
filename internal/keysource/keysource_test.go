package keysource

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "k")
	if err := os.WriteFile(file, []byte("FILEKEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(set map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := set[k]; return v, ok }
	}
	base := Option{Name: "encryption-key", Env: "GCSPUT_ENCRYPTION_KEY"}
	for _, tc := range []struct {
		name string
		o    func(Option) Option
		env  map[string]string
		want Source
	}{
		{"flag", func(o Option) Option { o.Value, o.Given = "FLAGKEY", true; return o },
			map[string]string{"GCSPUT_ENCRYPTION_KEY": "ENVKEY"}, Source{"FLAGKEY", true, "--encryption-key is empty"}},
		{"flag empty", func(o Option) Option { o.Given = true; return o }, nil, Source{"", true, "--encryption-key is empty"}},
		{"file", func(o Option) Option { o.File, o.FileGiven = file, true; return o },
			nil, Source{"FILEKEY\n", true, "--encryption-key-file " + file + " is empty"}},
		{"env", func(o Option) Option { return o },
			map[string]string{"GCSPUT_ENCRYPTION_KEY": "ENVKEY"}, Source{"ENVKEY", true, "$GCSPUT_ENCRYPTION_KEY is set but empty"}},
		{"env set empty", func(o Option) Option { return o },
			map[string]string{"GCSPUT_ENCRYPTION_KEY": ""}, Source{"", true, "$GCSPUT_ENCRYPTION_KEY is set but empty"}},
		{"none", func(o Option) Option { return o }, nil, Source{"", false, "$GCSPUT_ENCRYPTION_KEY is set but empty"}},
	} {
		got, err := tc.o(base).Read(env(tc.env))
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		o    Option
		want string
	}{
		{Option{Name: "encryption-key", Value: "SECRETKEY", Given: true, File: file, FileGiven: true}, "--encryption-key and --encryption-key-file both given: use one"},
		{Option{Name: "decryption-keys", FileGiven: true}, "--decryption-keys-file needs a file name"},
		{Option{Name: "decryption-keys", File: filepath.Join(dir, "gone"), FileGiven: true}, "--decryption-keys-file: open " + filepath.Join(dir, "gone") + ": no such file or directory"},
	} {
		_, err := tc.o.Read(env(nil))
		if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "SECRETKEY") {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

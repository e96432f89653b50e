package escape

import "testing"

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain/name.txt":     "plain/name.txt",
		"名前 with space":      "名前 with space",
		"a\r\nforged line":   `a\r\nforged line`,
		"esc\x1b[2Kclear":    `esc\x1b[2Kclear`,
		"bad\xffutf8":        `bad\xffutf8`,
		`back\slash`:         `back\\slash`,
		"tab\there\u202eRTL": `tab\there\u202eRTL`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShell(t *testing.T) {
	for in, want := range map[string]string{
		"gs://b/dir/a.txt":        "gs://b/dir/a.txt",
		"Cache-Control: no-cache": "'Cache-Control: no-cache'",
		"it's":                    `'it'\''s'`,
		"":                        "''",
		"*.log":                   "'*.log'",
	} {
		if got := Shell(in); got != want {
			t.Errorf("Shell(%q) = %q, want %q", in, got, want)
		}
	}
}

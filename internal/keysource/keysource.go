// Package keysource reads a secret option (a key, a list of keys) the one way it was
// given: on the command line, in a file, or in the environment. Two ways at once is an
// error, and so is a way given but empty, which callers refuse: an empty key file is a
// failed 'openssl rand > key', and taken as "no key" it would write objects unencrypted.
// Errors name the option and the file, never the secret.
package keysource

import (
	"fmt"
	"os"
)

// Option is one secret option as the command line gave it.
type Option struct {
	Name      string // the flag, "encryption-key"; its file form is Name+"-file"
	Value     string // the flag's value
	Given     bool   // the flag was given, even empty ("--encryption-key=")
	File      string // the file form's value
	FileGiven bool   // the file form was given, even empty
	Env       string // the environment variable read when neither form was given
}

// Source is a secret option's text and where it came from.
type Source struct {
	Text  string
	Given bool   // the flag, its file or the variable was given, even if empty
	Empty string // how to say it is empty: "--encryption-key is empty", "$GCSPUT_ENCRYPTION_KEY is set but empty"
}

// Read returns o's text: the flag's, or its file's, or the environment's, looked up by
// lookupEnv (os.LookupEnv when nil), which tells a variable set to "" from an unset one.
func (o Option) Read(lookupEnv func(string) (string, bool)) (Source, error) {
	switch {
	case o.Given && o.FileGiven:
		return Source{}, fmt.Errorf("--%s and --%s-file both given: use one", o.Name, o.Name)
	case o.Given:
		return Source{Text: o.Value, Given: true, Empty: "--" + o.Name + " is empty"}, nil
	case o.FileGiven && o.File == "":
		return Source{}, fmt.Errorf("--%s-file needs a file name", o.Name)
	case o.FileGiven:
		b, err := os.ReadFile(o.File)
		if err != nil {
			return Source{}, fmt.Errorf("--%s-file: %v", o.Name, err)
		}
		return Source{Text: string(b), Given: true, Empty: "--" + o.Name + "-file " + o.File + " is empty"}, nil
	}
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	v, ok := lookupEnv(o.Env)
	return Source{Text: v, Given: ok, Empty: "$" + o.Env + " is set but empty"}, nil
}

package state

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	"github.com/gcsput/gcsput/resumable"
)

// The state directory holds session URIs, which are credentials, and
// records that say which file goes where. Nothing read from it is trusted:
// the directory must be the user's alone, a record must be a regular 0600
// file the user owns, and a session is contacted only on the endpoint in use.

// checkStateDir refuses a state directory that another user could write
// to (a record planted there would be resumed: its session URI sent the
// file's bytes, and the token, wherever it pointed).
func checkStateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory", dir)
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("state directory %s belongs to user %d, not to you (user %d): use a state directory of your own", dir, uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 && ownerChecked {
		return fmt.Errorf("state directory %s can be written by other users (mode %04o), who could plant sessions in it: run 'chmod 700 %s', or use another state directory", dir, perm, dir)
	}
	return nil
}

// checkRecordFile says why a record file (from Lstat, or from Stat of the
// opened file) must be ignored, or "".
func checkRecordFile(fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "it is a symbolic link"
	case !fi.Mode().IsRegular():
		return "it is not a regular file"
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return fmt.Sprintf("it belongs to user %d, not to you", uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && ownerChecked {
		return fmt.Sprintf("its mode is %04o, not 0600", perm)
	}
	return ""
}

// Trusted reports whether r's upload sessions (its own, or its
// components') may be contacted: each must live on endpoint, the one in use
// (see CheckOrigin). A record with another is ignored, with a warning, and
// none of its sessions is sent a byte or a token. A record without an
// upload session is trusted: loading it checked the file.
func (s *Store) Trusted(r *Record, endpoint string) bool {
	var err error
	if r.Upload != nil {
		err = r.Upload.CheckOrigins(endpoint)
	}
	if r.Rewrite != nil && err == nil { // both are checked: a record may carry either, or both
		err = r.Rewrite.CheckOrigin(endpoint)
	}
	if err != nil {
		s.ignore(r.Key(), s.Path(r.Key()), err.Error())
		return false
	}
	return true
}

// CheckOrigin checks that a saved rewrite's token came from the endpoint in
// use: a token is sent nowhere else.
func (w *Rewrite) CheckOrigin(endpoint string) error {
	if err := resumable.CheckOrigin(w.Endpoint, endpoint); err != nil {
		return fmt.Errorf("its rewrite token is from %s, not from the endpoint in use (%s): %w", w.Endpoint, endpoint, resumable.ErrForeignOrigin)
	}
	return nil
}

// CheckOrigins checks with CheckOrigin the upload's session and those of
// its components in flight.
func (u *Upload) CheckOrigins(endpoint string) error {
	if u.Session != nil {
		if err := CheckOrigin(u.Session.URI, endpoint); err != nil {
			return err
		}
	}
	for i, c := range u.Components {
		if c.Session == nil {
			continue
		}
		if err := CheckOrigin(c.Session.URI, endpoint); err != nil {
			return fmt.Errorf("component %d: %w", i, err)
		}
	}
	return nil
}

// CheckOrigin checks that a saved upload session lives on the endpoint in
// use: same scheme, host and port (GCS session URIs are on the API host;
// the rule is resumable.CheckOrigin's). The message names both origins,
// never the URI (its upload_id is a secret).
func CheckOrigin(uri, endpoint string) error {
	err := resumable.CheckOrigin(uri, endpoint)
	if err == nil {
		return nil
	}
	u, perr := url.Parse(uri)
	if perr != nil || u.Host == "" {
		return errors.New("its session URI does not parse")
	}
	return fmt.Errorf("its session is on %s://%s, not on the endpoint in use (%s): %w", u.Scheme, u.Host, endpoint, resumable.ErrForeignOrigin)
}

// CheckFile says why a file of the state directory other than a record
// (from Lstat, or from Stat of the opened file) must be ignored, or "": the
// rules of a record (a regular 0600 file of the user's own).
func CheckFile(fi fs.FileInfo) string { return checkRecordFile(fi) }

// Package objerr words the error of a request for one object (or prefix)
// the same way in the library and the CLI: the object's URL first, then
// "no such object", "no such bucket" or the cause.
package objerr

import (
	"errors"
	"fmt"

	"cloud.google.com/go/storage"
)

// Error names the object (or prefix) Bucket/Name a request failed for, in
// words for the common cases, and wraps the cause.
type Error struct {
	Bucket, Name string
	Err          error
}

// New is the error of a request for gs://bucket/name that failed with err;
// nil when err is nil.
func New(bucket, name string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Bucket: bucket, Name: name, Err: err}
}

func (e *Error) Error() string {
	u := "gs://" + e.Bucket + "/" + e.Name
	switch {
	case errors.Is(e.Err, storage.ErrObjectNotExist):
		return u + ": no such object"
	case errors.Is(e.Err, storage.ErrBucketNotExist):
		return fmt.Sprintf("%s: no such bucket %q", u, e.Bucket)
	}
	return fmt.Sprintf("%s: %v", u, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

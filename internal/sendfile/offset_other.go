//go:build !unix

package sendfile

import "errors"

func offset(uintptr) (int64, error) { return 0, errors.ErrUnsupported }

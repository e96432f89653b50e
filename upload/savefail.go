package upload

import (
	"errors"
	"fmt"
)

// ErrNotSaved is matched (errors.Is) by Result.SaveErr: the transfer's
// state could not be written to the state directory (a full or read-only
// filesystem, a directory removed), so a process killed now cannot resume
// it from there.
var ErrNotSaved = errors.New("transfer state not saved")

// saveFailed notes a failed save of r's record: the first error of each
// transfer goes into r.SaveErr, and the first of the Client is a warning
// (Options.Warn), at once, because a kill -9 leaves no Result to read.
// The transfer itself goes on: a failed save only costs resuming it in
// another process.
func (c *Client) saveFailed(r *Result, err error) {
	if r.SaveErr == nil {
		r.SaveErr = fmt.Errorf("%w: %s -> %s: %w", ErrNotSaved, r.Source, r.Dest, err)
	}
	if c.saveWarned.CompareAndSwap(false, true) {
		c.warn(fmt.Sprintf("cannot save transfer state in the state directory %s (%v): a transfer cut short now (killed, crashed) cannot be resumed and will start over; free space there, or use another state directory", c.store.Dir, err))
	}
}

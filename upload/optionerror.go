package upload

import "fmt"

// An OptionError is an option or an operand refused before any request:
// which one, the value given, and why. Like [io/fs.PathError] it keeps the
// three apart, so a program (the gcsput command) can name the option in its
// own words, e.g. by its flag, and print Err as it is. It matches
// ErrBadOption, and whatever Err wraps (fs.ErrNotExist for a source that
// does not exist).
type OptionError struct {
	// Option is the field refused, spelt as its struct spells it
	// ("SyncOptions.Exclude"), or the operand: "source" or "destination".
	Option string
	// Value is the value refused, as given: a pattern, a path, a limit.
	Value string
	// Err says what is wrong with Value and what to do, in words that
	// read after either name: "does not exist: ...", "looks like ...".
	Err error
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("upload: %s %q: %v", e.Option, e.Value, e.Err)
}

// Is makes errors.Is(err, ErrBadOption) true.
func (e *OptionError) Is(target error) bool { return target == ErrBadOption }

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// badOption is an OptionError whose Err is the formatted text (its %w
// wrapped as fmt.Errorf wraps it).
func badOption(option, value, format string, args ...any) error {
	return &OptionError{Option: option, Value: value, Err: fmt.Errorf(format, args...)}
}

// a reason is an OptionError's Err that says why in its own words and
// still matches its cause (errors.Is(err, fs.ErrNotExist)).
type reason struct {
	text  string
	cause error
}

func (r *reason) Error() string { return r.text }
func (r *reason) Unwrap() error { return r.cause }

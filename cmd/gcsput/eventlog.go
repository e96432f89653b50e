package main

import "github.com/gcsput/gcsput/internal/eventlog"

// eventLog is the --log file (package eventlog: NDJSON, every line redacted); a nil
// *eventLog is no --log, and its methods do nothing.
type eventLog struct{ l *eventlog.Log }

// openEventLog opens the --log file; "" gives a nil log.
func openEventLog(name string) (*eventLog, error) {
	l, err := eventlog.Open(name)
	if err != nil {
		return nil, usagef("--log: %v", err)
	}
	if l == nil {
		return nil, nil
	}
	return &eventLog{l}, nil
}

// write logs one event: kind ("retry", "chunk", "result", ...) plus fields, with the time.
func (e *eventLog) write(kind string, fields any) {
	if e != nil {
		e.l.Write(kind, fields)
	}
}

func (e *eventLog) close() error {
	if e == nil {
		return nil
	}
	return e.l.Close()
}

// The redaction of secrets and the retry lines -v prints (package eventlog).
var (
	redact        = eventlog.Redact
	retryLine     = eventlog.RetryLine
	partRetryLine = eventlog.PartRetryLine
	partName      = eventlog.PartName
	causeText     = eventlog.CauseText
)

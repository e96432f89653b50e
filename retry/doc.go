// Package retry retries requests to Google Cloud Storage the way Google specifies, and offers
// the other well-known backoff policies.
package retry

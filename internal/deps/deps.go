//go:build tools

// Package deps pins the module's chosen dependencies while the packages that
// use them are being written. It is never built.
package deps

import (
	_ "cloud.google.com/go/storage"
	_ "github.com/schollz/progressbar/v3"
	_ "golang.org/x/oauth2/google"
	_ "google.golang.org/api/option"
	_ "google.golang.org/api/storage/v1"
)

package upload_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/gcsput/gcsput/upload"
)

func ExampleOptionError() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	src, dst := upload.LocalSide(dir), upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "mirror/"})

	err := upload.CheckSync(src, dst, upload.SyncOptions{Exclude: []string{`^cache/`}})
	var oe *upload.OptionError
	if errors.As(err, &oe) {
		fmt.Println(oe.Option, oe.Value)
		fmt.Println(oe.Err)
	}
	fmt.Println(errors.Is(err, upload.ErrBadOption))
	// Output:
	// SyncOptions.Exclude ^cache/
	// looks like a regular expression (gcloud storage rsync's --exclude takes one); Exclude takes a glob such as '*.tmp': for a regular expression use ExcludeRegexp
	// true
}

func ExampleParseMaxDelete() {
	m, err := upload.ParseMaxDelete("25%")
	fmt.Println(m, err)
	_, err = upload.ParseMaxDelete("150%")
	fmt.Println(err)
	// Output:
	// 25% <nil>
	// upload: SyncOptions.MaxDelete "150%": a share of the destination is 0% to 100%, e.g. 25%
}

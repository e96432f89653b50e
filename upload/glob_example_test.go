package upload_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gcsput/gcsput/upload"
)

// Glob expands a gs:// wildcard as gsutil does: "*" stays in one folder,
// "**" crosses them. The listing asks only under the literal prefix and sends
// matchGlob, so the server returns only the matches.
func ExampleClient_Glob() {
	srv, opts := fake()
	defer srv.Close()
	for _, name := range []string{"docs/a.txt", "docs/b.md", "docs/old/c.txt", "logs/d.txt"} {
		srv.PutObject("my-bucket", name, []byte(name))
	}
	ctx := context.Background()
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	for _, p := range []string{"gs://my-bucket/docs/*.txt", "gs://my-bucket/docs/**.txt", "gs://my-bucket/*/?.txt"} {
		pattern, _ := upload.ParseURL(p)
		fmt.Print(p, ":")
		for o, err := range c.Glob(ctx, pattern, upload.GlobOptions{}) {
			if err != nil {
				log.Fatal(err)
			}
			fmt.Print(" ", o.Name)
		}
		fmt.Println()
	}
	none, _ := upload.ParseURL("gs://my-bucket/docs/*.pdf")
	for _, err := range c.Glob(ctx, none, upload.GlobOptions{}) {
		fmt.Println(err)
	}
	fmt.Println("listings filtered by matchGlob:", srv.Stats().GlobLists)
	// Output:
	// gs://my-bucket/docs/*.txt: docs/a.txt
	// gs://my-bucket/docs/**.txt: docs/a.txt docs/old/c.txt
	// gs://my-bucket/*/?.txt: docs/a.txt logs/d.txt
	// no objects match gs://my-bucket/docs/*.pdf
	// listings filtered by matchGlob: 4
}

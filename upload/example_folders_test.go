package upload_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// hnsBucket adds to srv the bucket my-hns, with hierarchical namespace, holding
// the objects names (each write creates the folders above it).
func hnsBucket(srv *fakegcs.Server, names ...string) {
	if err := srv.CreateHNSBucket("my-hns"); err != nil {
		log.Fatal(err)
	}
	for _, n := range names {
		if _, err := srv.PutObject("my-hns", n, []byte(n)); err != nil {
			log.Fatal(err)
		}
	}
}

// HierarchicalNamespace tells a bucket with real folders from a flat one.
func ExampleClient_HierarchicalNamespace() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	hnsBucket(srv)

	on, err := c.HierarchicalNamespace(ctx, "my-hns")
	fmt.Println("my-hns:", on, err)
	on, err = c.HierarchicalNamespace(ctx, "my-bucket")
	fmt.Println("my-bucket:", on, err)
	// Output:
	// my-hns: true <nil>
	// my-bucket: false <nil>
}

// Folders lists the folders of a bucket with hierarchical namespace: one
// level below the prefix, or with recursive all of them.
func ExampleClient_Folders() {
	srv, c, stop := client(nil)
	defer stop()
	hnsBucket(srv, "photos/2023/a.jpg", "photos/2024/b.jpg", "photos/2024/raw/c.raw")

	for f, err := range c.Folders(context.Background(), "my-hns", "photos/", false) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(f.Name)
	}
	// Output:
	// photos/
	// photos/2023/
	// photos/2024/
}

// DeleteFolder deletes an empty folder; one that holds anything is
// ErrFolderNotEmpty.
func ExampleClient_DeleteFolder() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	hnsBucket(srv, "tmp/scratch.txt")

	err := c.DeleteFolder(ctx, upload.URL{Bucket: "my-hns", Object: "tmp/"})
	fmt.Println(errors.Is(err, upload.ErrFolderNotEmpty))
	c.Delete(ctx, upload.URL{Bucket: "my-hns", Object: "tmp/scratch.txt"}, upload.DeleteOptions{})
	fmt.Println(c.DeleteFolder(ctx, upload.URL{Bucket: "my-hns", Object: "tmp/"}))
	// Output:
	// true
	// <nil>
}

// RenameFolder moves a folder with everything under it in one call,
// instead of a copy and a delete per object.
func ExampleClient_RenameFolder() {
	srv, c, stop := client(nil)
	defer stop()
	hnsBucket(srv, "draft/a.txt", "draft/img/b.png")

	err := c.RenameFolder(context.Background(), upload.URL{Bucket: "my-hns", Object: "draft/"},
		upload.URL{Bucket: "my-hns", Object: "final/"})
	fmt.Println(err)
	names, _ := srv.ObjectNames("my-hns")
	fmt.Println(names)
	// Output:
	// <nil>
	// [final/a.txt final/img/b.png]
}

// ListLevel lists one level, like List with delimiter "/", and in a
// bucket with hierarchical namespace it lists empty folders too.
func ExampleClient_ListLevel() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	hnsBucket(srv, "photos/cover.jpg", "photos/2024/a.jpg")
	c.Delete(ctx, upload.URL{Bucket: "my-hns", Object: "photos/2024/a.jpg"}, upload.DeleteOptions{}) // photos/2024/ stays, empty

	for a, err := range c.ListLevel(ctx, "my-hns", "photos/") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("ListLevel:", a.Name+a.Prefix)
	}
	for a, err := range c.List(ctx, "my-hns", "photos/", "/") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("List:", a.Name+a.Prefix)
	}
	// Output:
	// ListLevel: photos/cover.jpg
	// ListLevel: photos/2024/
	// List: photos/cover.jpg
}

package upload_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// threeVersions turns object versioning on in my-bucket and puts three
// generations of notes.txt ("v1", "v2", then "v3", live); it returns
// their generation numbers, oldest first.
func threeVersions(srv *fakegcs.Server) []int64 {
	if err := srv.SetVersioning("my-bucket", true); err != nil {
		log.Fatal(err)
	}
	var gens []int64
	for _, data := range []string{"v1", "v2", "v3"} {
		a, err := srv.PutObject("my-bucket", "notes.txt", []byte(data))
		if err != nil {
			log.Fatal(err)
		}
		gens = append(gens, a.Generation)
	}
	return gens
}

// Versions lists every generation, live and noncurrent, oldest first.
func ExampleClient_Versions() {
	srv, c, stop := client(nil)
	defer stop()
	gens := threeVersions(srv)

	for a, err := range c.Versions(context.Background(), "my-bucket", "notes", "") {
		if err != nil {
			log.Fatal(err)
		}
		state := "noncurrent"
		if a.Deleted.IsZero() {
			state = "live"
		}
		fmt.Println(a.Name, "put", slices.Index(gens, a.Generation)+1, state)
	}
	// Output:
	// notes.txt put 1 noncurrent
	// notes.txt put 2 noncurrent
	// notes.txt put 3 live
}

// Versions and SoftDeleted take a delimiter as List does (here "/": the
// generations of the top level and one entry per folder).
func ExampleClient_Versions_delimiter() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	gens := threeVersions(srv)
	srv.PutObject("my-bucket", "logs/a.log", []byte("a"))

	n := 0
	for a, err := range c.Versions(ctx, "my-bucket", "", "/") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(a.Name + a.Prefix)
		n++
	}
	fmt.Println(n, "entries")

	srv.SetSoftDelete("my-bucket", 7*24*time.Hour)
	c.Delete(ctx, upload.URL{Bucket: "my-bucket", Object: "notes.txt"}, upload.DeleteOptions{Generation: gens[0]})
	for a, err := range c.SoftDeleted(ctx, "my-bucket", "", "") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("soft-deleted:", a.Name, "put", slices.Index(gens, a.Generation)+1)
	}
	// Output:
	// notes.txt
	// notes.txt
	// notes.txt
	// logs/
	// 4 entries
	// soft-deleted: notes.txt put 1
}

// StatGeneration reads the metadata of one generation, noncurrent or live.
func ExampleClient_StatGeneration() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	gens := threeVersions(srv)
	u := upload.URL{Bucket: "my-bucket", Object: "notes.txt"}

	first, err := c.StatGeneration(ctx, u, gens[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.Size, first.Generation == gens[0], "noncurrent:", !first.Deleted.IsZero())
	_, err = c.StatGeneration(ctx, u, gens[2]+1)
	fmt.Println(errors.Is(err, storage.ErrObjectNotExist))
	// Output:
	// 2 true noncurrent: true
	// true
}

// Delete with a Generation deletes that generation, here a noncurrent
// one; the live object is untouched.
func ExampleClient_Delete_generation() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	gens := threeVersions(srv)

	if err := c.Delete(ctx, upload.URL{Bucket: "my-bucket", Object: "notes.txt"}, upload.DeleteOptions{Generation: gens[0]}); err != nil {
		log.Fatal(err)
	}
	left, _ := srv.Generations("my-bucket", "notes.txt")
	data, _, _ := srv.Object("my-bucket", "notes.txt")
	fmt.Println(len(left), "generations left; live:", string(data))
	// Output:
	// 2 generations left; live: v3
}

// CopyVersions copies a history, oldest generation first, so that a
// versioned destination keeps it.
func ExampleClient_CopyVersions() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	threeVersions(srv)
	srv.CreateBucket("archive")
	srv.SetVersioning("archive", true)

	results, err := c.CopyVersions(ctx, upload.URL{Bucket: "my-bucket", Object: "notes.txt"},
		upload.URL{Bucket: "archive", Object: "notes.txt"}, upload.CopyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(results), "copies:", results[0].Status, results[1].Status, results[2].Status)
	from, to := orFatal(srv.Generations("my-bucket", "notes.txt")), orFatal(srv.Generations("archive", "notes.txt"))
	for i := range to {
		fmt.Println(to[i].Size, "bytes, same as source generation", i+1, ":", to[i].CRC32C == from[i].CRC32C)
	}
	data, _, _ := srv.Object("archive", "notes.txt")
	fmt.Println("live:", string(data))
	// Output:
	// 3 copies: copied copied copied
	// 2 bytes, same as source generation 1 : true
	// 2 bytes, same as source generation 2 : true
	// 2 bytes, same as source generation 3 : true
	// live: v3
}

// orFatal returns v, or stops on err.
func orFatal[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// SoftDeleteRetention says how long a bucket keeps what is deleted.
func ExampleClient_SoftDeleteRetention() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()

	d, err := c.SoftDeleteRetention(ctx, "my-bucket")
	fmt.Println(d, err)
	srv.SetSoftDelete("my-bucket", 7*24*time.Hour)
	d, err = c.SoftDeleteRetention(ctx, "my-bucket")
	fmt.Println(d, err)
	// Output:
	// 0s <nil>
	// 168h0m0s <nil>
}

// SoftDeleted lists what a bucket with soft delete keeps of deleted
// objects, each restorable until its HardDeleteTime.
func ExampleClient_SoftDeleted() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.SetSoftDelete("my-bucket", 7*24*time.Hour)
	srv.PutObject("my-bucket", "report.pdf", []byte("pdf"))
	c.Delete(ctx, upload.URL{Bucket: "my-bucket", Object: "report.pdf"}, upload.DeleteOptions{})

	for a, err := range c.SoftDeleted(ctx, "my-bucket", "", "") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(a.Name, a.HardDeleteTime.Sub(a.SoftDeleteTime))
	}
	// Output:
	// report.pdf 168h0m0s
}

// Restore makes a soft-deleted object live again; generation 0 restores
// the one deleted last.
func ExampleClient_Restore() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.SetSoftDelete("my-bucket", 7*24*time.Hour)
	srv.PutObject("my-bucket", "report.pdf", []byte("pdf"))
	u := upload.URL{Bucket: "my-bucket", Object: "report.pdf"}
	c.Delete(ctx, u, upload.DeleteOptions{})

	attrs, err := c.Restore(ctx, u, upload.RestoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(attrs.Name, attrs.Size, attrs.Metageneration)
	_, err = c.Restore(ctx, upload.URL{Bucket: "my-bucket", Object: "never-deleted.pdf"}, upload.RestoreOptions{})
	fmt.Println(errors.Is(err, upload.ErrNotSoftDeleted))
	// Output:
	// report.pdf 3 1
	// true
}

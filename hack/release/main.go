// Command release writes metalwire's clusterctl artifacts (see internal/release) into a directory:
//
//	go run ./hack/release --out out/release --image ghcr.io/metalwire/manager:v0.1.0
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/metalwire/metalwire/internal/release"
)

func main() {
	out := flag.String("out", "out/release", "directory to write the artifacts to")
	image := flag.String("image", release.DefaultImage, "the manager image the components run")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	a, err := release.Make(release.Options{Root: *root, Image: *image})
	if err == nil {
		err = a.Write(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s, %s and %s to %s\n", release.ComponentsFile, release.MetadataFile, release.TemplateFile, *out)
}

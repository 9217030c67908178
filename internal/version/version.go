// Package version reports which metalwire build is running.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set at link time by `make build` (-X ...version.Version=...). A plain `go build`
// leaves it empty, and Get falls back to the module version Go recorded.
var Version string

// Info describes a build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	Commit    string `json:"commit,omitempty"`
}

// Get returns the running build's version information.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Commit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}

// String is the one-line form `metalwire version` prints.
func (i Info) String() string {
	s := fmt.Sprintf("metalwire %s (%s, %s)", i.Version, i.GoVersion, i.Platform)
	if i.Commit != "" {
		s += " commit " + i.Commit
	}
	return s
}

// Command manager is metalwire's controller manager as the image runs it: the controllers and
// nothing else (no dev control plane, no host simulator). `metalwire manager` runs the same code.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/metalwire/metalwire/internal/manager"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run returns the exit code: 2 for a usage mistake, 1 for a failure while running.
func run(args []string) int {
	o := &manager.Options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 2
	}
	groups, err := o.Groups()
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 2
	}
	if err := manager.Run(ctrl.SetupSignalHandler(), o, groups); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return 0
}

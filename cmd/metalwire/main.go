// Command metalwire is the one metalwire binary: the controller manager, dev mode and the
// offline tools, as subcommands.
package main

import (
	"errors"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	if err := newRootCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "metalwire:", err)
		os.Exit(exitCode(err))
	}
}

// usageError marks a mistake in how the command was called (exit code 2), as opposed to bad
// input or a failure while running (exit code 1).
type usageError struct{ error }

func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

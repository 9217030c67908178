package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metalwire/metalwire/pkg/migrate"
)

// errNeedsUser makes migrate exit 1 after it has written everything it could: the notes on
// stderr already say what to change, so the error adds only a summary line.
var errNeedsUser = errors.New("some fields need your attention (lines starting with \"must change:\")")

func newMigrateCommand() *cobra.Command {
	var file, output, to string
	cmd := &cobra.Command{
		Use:   "migrate -f FILE",
		Short: "Rewrite seed-era Metal3 and Cluster API manifests to the current API versions",
		Long: `migrate rewrites manifests written for CAPM3 v1alpha3/v1alpha4/v1beta1 and Cluster API
v1alpha3/v1alpha4/v1beta1 into the shapes served today (infrastructure.cluster.x-k8s.io/v1beta2,
cluster.x-k8s.io/v1beta2, bootstrap and controlplane v1beta2; ipam.metal3.io stays v1alpha1).

The migrated YAML goes to stdout (or -o FILE). Each change and each thing you must fix yourself
goes to stderr, one line each, naming the object and the field; so does each warning (a field
metalwire does not need but CAPM3 would). YAML comments are not kept.

--to v1beta1 writes the Metal3 kinds as CAPM3's infrastructure.cluster.x-k8s.io/v1beta1 instead
(for repositories CAPM3 v1beta1 tools still read); a field v1beta1 has no place for is a
"must change" note. Cluster API's kinds stay v1beta2.

Exit status: 0 when everything was migrated, 1 when something needs you, 2 on usage errors.`,
		Example: `  metalwire migrate -f old.yaml > new.yaml
  metalwire migrate --to v1beta1 -f old.yaml > capm3-v1beta1.yaml
  cat old.yaml | metalwire migrate -f - -o new.yaml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unexpected argument %q: give the manifest with -f", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError{errors.New("-f is required: the manifest to migrate, or - for stdin")}
			}
			if !slices.Contains(migrate.Targets, to) {
				return usageError{fmt.Errorf("--to %q: choose %s", to, strings.Join(migrate.Targets, " or "))}
			}
			in, err := readInput(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			res, err := migrate.ToVersion(in, to)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if err := writeOutput(cmd.OutOrStdout(), output, res.Output()); err != nil {
				return err
			}
			report := cmd.ErrOrStderr()
			for _, n := range res.Changes() {
				fmt.Fprintln(report, n)
			}
			for _, n := range res.Warnings() {
				fmt.Fprintln(report, "warning:", n)
			}
			for _, n := range res.MustChange() {
				fmt.Fprintln(report, "must change:", n)
			}
			warnings := ""
			if n := len(res.Warnings()); n > 0 {
				warnings = plural(n, "warning") + ", "
			}
			fmt.Fprintf(report, "migrated %s: %s, %s%d to fix by hand\n",
				plural(len(res.Documents), "document"), plural(len(res.Changes()), "change"), warnings, len(res.MustChange()))
			if len(res.MustChange()) > 0 {
				return errNeedsUser
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "manifest to migrate (multi-document YAML); - reads stdin")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the migrated YAML to this file instead of stdout")
	cmd.Flags().StringVar(&to, "to", migrate.ToV1beta2, "API version of the infrastructure.cluster.x-k8s.io kinds: v1beta2 (stored), or v1beta1 (CAPM3's, served through conversion)")
	return cmd
}

func readInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		in, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return in, nil
	}
	in, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	return in, nil
}

func writeOutput(stdout io.Writer, file string, out []byte) error {
	if file == "" {
		_, err := stdout.Write(out)
		return err
	}
	if err := os.WriteFile(file, out, 0o644); err != nil { //nolint:gosec // a manifest, readable like its input
		return fmt.Errorf("writing -o: %w", err)
	}
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

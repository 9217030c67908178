package labelsync

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// PrefixAnnotation on a Metal3Cluster lists the label prefixes to sync, comma-separated.
const PrefixAnnotation = "metal3.io/metal3-label-sync-prefixes"

// parsePrefixes reads the annotation's value. Blank entries are skipped; an entry that is not a
// DNS subdomain (a label prefix) is an error naming it.
func parsePrefixes(value string) (map[string]bool, error) {
	prefixes := map[string]bool{}
	for _, p := range strings.Split(value, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(p); len(errs) > 0 {
			return nil, fmt.Errorf("annotation %s: %q is not a label prefix (%s); list prefixes such as example.com/ would use: example.com,my.prefix.io",
				PrefixAnnotation, p, strings.Join(errs, "; "))
		}
		prefixes[p] = true
	}
	return prefixes, nil
}

// synced picks the labels whose prefix (the part before "/") is one of prefixes.
func synced(labels map[string]string, prefixes map[string]bool) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		prefix, name, ok := strings.Cut(k, "/")
		if ok && name != "" && prefixes[prefix] {
			out[k] = v
		}
	}
	return out
}

// syncLabels changes node's labels so that those under prefixes are exactly the host's; it
// reports whether anything changed.
func syncLabels(host, node map[string]string, prefixes map[string]bool) (map[string]string, bool) {
	want := synced(host, prefixes)
	have := synced(node, prefixes)
	changed := false
	out := make(map[string]string, len(node)+len(want))
	for k, v := range node {
		out[k] = v
	}
	for k := range have {
		if _, keep := want[k]; !keep {
			delete(out, k)
			changed = true
		}
	}
	for k, v := range want {
		if old, ok := have[k]; !ok || old != v {
			out[k] = v
			changed = true
		}
	}
	return out, changed
}

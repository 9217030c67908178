package metal3data

import (
	"strings"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// claimKey names an address claim created for a Metal3Data among the writes the cache may not
// show yet. The Metal3Data is part of the key: with IP reuse a claim keyed by host may be
// deleted and wanted again by the host's next Metal3Data at once.
func claimKey(data *infrav1.Metal3Data, claim string) string {
	return string(data.UID) + "/" + claim
}

// forgetWrites drops what is remembered of a Metal3Data that goes.
func (r *Reconciler) forgetWrites(data *infrav1.Metal3Data) {
	r.readyWritten.Forget(string(data.UID))
	prefix := claimKey(data, "")
	for key := range r.createdClaims.All() {
		if strings.HasPrefix(key, prefix) {
			r.createdClaims.Forget(key)
		}
	}
}

// Package metal3dataclaim reconciles Metal3DataClaims: it holds the claim's finalizer, reports in
// the claim's status which Metal3Data serves it and whether that is rendered (with the data's
// error, so a user looking at the machine's claim sees why it waits), and on deletion deletes
// the Metal3Data and waits for it to go, which frees the index.
package metal3dataclaim

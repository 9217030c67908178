// Package metal3dataclaim is the claim's part of the data chain. Report fills a claim's status
// from its Metal3Data's outcome (which Metal3Data serves it, whether that is rendered, the data's
// error, so a user looking at the machine's claim sees why it waits); the Metal3Data controller
// calls it where the data is rendered, so no controller relays the outcome. The Reconciler
// reports only what keeps a claim from having a Metal3Data (its template missing, its wait for
// an index) and releases deleted claims. It adds no finalizer: a deleted claim's Metal3Data is
// deleted by the template controller (and the garbage collector), and the Metal3Data's own
// finalizer releases its addresses and Secrets. A claim still carrying the finalizer of an
// earlier version (or CAPM3's) has it removed once its Metal3Data are gone. The Claimer is the
// machine controller's side: it makes the claim and reads the claim's Metal3Data.
package metal3dataclaim

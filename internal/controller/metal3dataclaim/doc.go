// Package metal3dataclaim reconciles Metal3DataClaims: it reports in the claim's status which
// Metal3Data serves it and whether that is rendered (with the data's error, so a user looking at
// the machine's claim sees why it waits). It adds no finalizer: a deleted claim's Metal3Data is
// deleted by the template controller (and the garbage collector), and the Metal3Data's own
// finalizer releases its addresses and Secrets. A claim still carrying the finalizer of an
// earlier version (or CAPM3's) has it removed once its Metal3Data are gone.
package metal3dataclaim

// Package metal3datatemplate reconciles Metal3DataTemplates: it gives every Metal3DataClaim of a
// template the lowest free index, creates the claim's Metal3Data named <template>-<index>, and
// records the indexes in the template's status.
//
// Index allocation is the pure function in allocator.go. The API server's name uniqueness is the
// lock: two claims can never hold one Metal3Data name, whatever the cache says, and an
// AlreadyExists answer only moves the claim to the next free index.
package metal3datatemplate

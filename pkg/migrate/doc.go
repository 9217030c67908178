// Package migrate rewrites seed-era Metal3 and Cluster API manifests (v1alpha3, v1alpha4,
// v1beta1) into the shapes metalwire and Cluster API serve today (infrastructure and core
// v1beta2, ipam.metal3.io v1alpha1), and says what it changed and what only the user can fix.
//
// It is pure: YAML documents in, YAML documents out, with a list of changes and a list of
// things the user must change, each naming the object (kind/name) and the field path. It never
// guesses: a rewrite is done only when the new shape follows from the old one alone.
package migrate

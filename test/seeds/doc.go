// Package seeds runs `metalwire migrate` over every example of the seed documents
// (test/fixtures/seeds) and applies the result to a real API server: the table says, per
// document, whether it applies, is refused naming a field, needs the user (and which field
// migrate names), or is of a kind no installed CRD serves.
package seeds

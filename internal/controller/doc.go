// Package controller wires metalwire's reconcilers into a manager. Each reconciler lives in a
// package of its own below this one; this package only knows which belong to which group, so
// `metalwire manager --controllers=...` can run a subset.
package controller

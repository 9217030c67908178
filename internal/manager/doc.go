// Package manager runs metalwire's controller manager: the flags it takes and the Run that
// starts the controllers, their caches, the health probes and the metrics endpoint. Both the
// image's binary (cmd/manager) and `metalwire manager` call it, so they behave alike.
package manager

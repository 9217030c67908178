// Package osnetconfig checks documents for os-net-config, the network configuration tool of
// TripleO and of hosts moving from it to Metal3: a config file against os-net-config's own JSON
// schema (embedded, draft-07, its patterns run with Python's regexp semantics) and a mapping
// file against os-net-config's rule that no device is mapped twice. metalwire's renderer and
// generator check every document they write with it, and tests check golden files the same way.
// os-net-config is not packaged for Debian, so the schema stands in for it.
package osnetconfig

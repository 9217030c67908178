// Package sshcli is the framework of metalwire's SSH command-line switch drivers. A CommandSet
// describes one switch operating system: how each fabric.Change is rendered into CLI lines, how
// configuration mode is entered, left and saved, the prompt that ends a command's output, how
// the switch's ports and VLANs are read back, and the patterns in the output that mean a command
// failed. Driver turns a CommandSet into a fabric.Driver: one SSH connection per session, one
// batch sent in one go, host keys pinned, credentials never logged.
//
// Two ways to talk to a switch:
//   - ModeExec runs each line on an exec channel and reads its exit status, stdout and stderr
//     (switches whose CLI is a Linux shell: Open vSwitch, Cumulus, SONiC).
//   - ModeShell opens an interactive shell on a PTY, sends lines one by one and reads each
//     command's output up to the prompt (EOS, NX-OS, Junos, Dell OS10).
//
// Why golang.org/x/crypto/ssh and not scrapligo: metalwire pins one host key per switch and must
// report the SHA256 fingerprint it saw in a NetworkDevice condition (*fabric.HostKeyError).
// scrapligo checks host keys only against a known_hosts file and turns a mismatch into an opaque
// error; its default transport execs the system ssh binary; and it always drives a PTY with
// prompts, while the Linux-based switches are driven best over an exec channel whose exit status
// says whether the command worked. x/crypto/ssh gives a HostKeyCallback, both channel kinds and
// no process per switch; the prompt and error handling scrapligo would add is the small part
// this package owns.
package sshcli

// Package sshcli is the framework of metalwire's SSH command-line switch drivers. A CommandSet
// describes one switch operating system: how each fabric.Change is rendered into CLI lines, how
// configuration mode is entered, left, committed and saved, how the switch's ports and VLANs are
// read back, and the patterns in the output that mean a command failed. Driver turns a
// CommandSet into a fabric.Driver: one SSH connection per session (one login per batch), one
// batch sent in one go, host keys pinned, credentials never logged.
//
// Three ways to talk to a switch:
//   - ModeExec runs each line on an exec channel and reads its exit status, stdout and stderr
//     (switches whose CLI is a Linux shell: Open vSwitch, Cumulus, SONiC).
//   - ModePlatform types lines into the switch's CLI through scrapligo (v1) with one of its
//     platform definitions (EOS, NX-OS, Junos) or one of ours (Dell OS10): scrapligo knows each
//     OS's prompts, privilege levels (exec, enable, configuration), how to escalate and come
//     back, and the commands that turn paging off.
//   - ModeShell types lines into one interactive shell and reads each command's output up to
//     the CommandSet's own Prompt (a shell that no scrapligo platform describes).
//
// The SSH connection is always this package's (golang.org/x/crypto/ssh): metalwire pins one host
// key per switch and reports the SHA256 fingerprint it saw in a NetworkDevice condition
// (*fabric.HostKeyError), while scrapligo's own transports check host keys only against a
// known_hosts file (or not at all) and its default one execs the system ssh binary. scrapligo
// runs on top of that connection through a custom transport (a shell channel of it), so it
// never sees a password or key and one login serves every command of a batch.
package sshcli

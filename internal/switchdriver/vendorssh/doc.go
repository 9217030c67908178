// Package vendorssh holds the command sets of the vendor switch operating systems metalwire drives
// over SSH with the sshcli framework: Arista EOS, Cisco NX-OS, Juniper Junos, SONiC, Dell OS10
// and NVIDIA Cumulus Linux (NVUE). Each is a sshcli.CommandSet: how a fabric change is typed,
// how the OS's own output (JSON where the OS has it) is read back, the lines that save or
// commit a batch, and the lines that mean the switch refused a command.
//
// The CLI switches (EOS, NX-OS, Junos, OS10) are driven through scrapligo's platform
// definitions (sshcli.ModePlatform); the Linux-based ones (SONiC, Cumulus) over exec channels,
// whose exit status says whether a command worked. docs/vendor-switches.md lists the exact
// commands each change sends.
package vendorssh

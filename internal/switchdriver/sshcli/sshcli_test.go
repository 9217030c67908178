package sshcli_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// shellSet drives a Linux shell (dash on a PTY) as a CLI with prompts: "$ " is the prompt, and
// "not found" the error pattern. Access ports render as echo lines, so the output shows what ran.
func shellSet() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS:   "test-shell",
		Mode:        sshcli.ModeShell,
		Setup:       []string{"PS1='sw# '"},
		ConfigEnter: []string{"echo configure"},
		ConfigExit:  []string{"echo end"},
		Prompt:      regexp.MustCompile(`(\$|sw#) $`),
		Errors:      []*regexp.Regexp{regexp.MustCompile(`not found`)},
		Render: func(_ fabric.Endpoint, _ fabric.State, b fabric.Batch) ([]string, error) {
			var lines []string
			for _, c := range b {
				if c.Op == fabric.OpAccessPort && c.Port.Name == "bad" {
					lines = append(lines, "no-such-command "+c.Port.Name)
					continue
				}
				lines = append(lines, fmt.Sprintf("echo interface %s vlan %d", c.Port.Name, c.Port.VLAN))
			}
			return lines, nil
		},
		ReadCommands: func(fabric.Endpoint, []string) []string { return []string{"echo port p1 access 7"} },
		ParseState: func(_ fabric.Endpoint, _ []string, outs []string) (fabric.State, error) {
			f := strings.Fields(outs[0])
			if len(f) != 4 || f[0] != "port" {
				return fabric.State{}, fmt.Errorf("unexpected output %q", outs[0])
			}
			return fabric.State{Ports: map[string]fabric.Port{f[1]: {Name: f[1], Mode: fabric.ModeAccess, VLAN: 7}}}, nil
		},
		VersionCommand: "echo version 9.9",
	}
}

func endpoint(srv *ovstest.SSHServer) fabric.Endpoint {
	return fabric.Endpoint{Switch: "leaf1", Address: srv.Host, Port: srv.Port, HostKey: srv.HostKey,
		Credentials: fabric.Credentials{Username: srv.User, Password: srv.Password}}
}

func TestHostKeys(t *testing.T) {
	srv := ovstest.StartSSHD(t, nil)
	drv := sshcli.Driver{Set: shellSet()}
	ctx := context.Background()
	otherKey, _ := ovstest.NewSSHKey(t)
	for _, tc := range []struct {
		name    string
		hostKey string
		pinned  bool
	}{
		{name: "no key pinned", hostKey: "", pinned: false},
		{name: "another key pinned (the switch's key changed)", hostKey: otherKey, pinned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := endpoint(srv)
			ep.HostKey = tc.hostKey
			_, err := drv.Connect(ctx, ep)
			var hk *fabric.HostKeyError
			if !errors.As(err, &hk) {
				t.Fatalf("connect: %v, want a *fabric.HostKeyError", err)
			}
			if hk.Fingerprint != srv.Fingerprint || hk.Pinned != tc.pinned || hk.Switch != "leaf1" {
				t.Fatalf("HostKeyError %+v, want fingerprint %s (ssh-keygen -l), pinned %v", hk, srv.Fingerprint, tc.pinned)
			}
			t.Logf("as a user sees it: %v", err)
		})
	}
	t.Run("the key as ssh-keyscan prints it is trusted", func(t *testing.T) {
		ep := endpoint(srv)
		ep.HostKey = "# 127.0.0.1:22 SSH-2.0-OpenSSH_9.2\n[127.0.0.1]:2222 " + srv.HostKey + "\n"
		sess, err := drv.Connect(ctx, ep)
		if err != nil {
			t.Fatalf("connect with the pinned key: %v", err)
		}
		_ = sess.Close()
	})
}

func TestLogin(t *testing.T) {
	srv := ovstest.StartSSHD(t, nil)
	drv := sshcli.Driver{Set: shellSet()}
	ctx := context.Background()

	ep := endpoint(srv)
	ep.Credentials.Password = "wrong"
	_, err := drv.Connect(ctx, ep)
	if err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v, want a login refused error that does not show the password", err)
	}

	ep = endpoint(srv)
	ep.Credentials.Password, ep.Credentials.PrivateKey = "", srv.ClientKey
	sess, err := drv.Connect(ctx, ep)
	if err != nil {
		t.Fatalf("key login: %v", err)
	}
	_ = sess.Close()
}

func TestUnreachableSwitchFailsFast(t *testing.T) {
	port := ovstest.FreePort(t)
	start := time.Now()
	_, err := sshcli.Driver{Set: shellSet(), DialTimeout: 2 * time.Second}.Connect(context.Background(),
		fabric.Endpoint{Switch: "leaf9", Address: "127.0.0.1", Port: port, Credentials: fabric.Credentials{Username: "u", Password: "p"}})
	if err == nil || !strings.Contains(err.Error(), "switch leaf9: cannot reach 127.0.0.1:") {
		t.Fatalf("connect to a closed port: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s to fail", time.Since(start))
	}
}

// Shell mode: lines typed into an interactive shell, each read up to the prompt; an error
// pattern in the output stops the batch and names the command.
func TestShellMode(t *testing.T) {
	srv := ovstest.StartSSHD(t, nil)
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: shellSet(), CommandTimeout: 20 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	info, err := sess.Info(ctx)
	if err != nil || info.Version != "version 9.9" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	st, err := sess.Read(ctx, []string{"p1"})
	if err != nil || st.Ports["p1"].VLAN != 7 {
		t.Fatalf("Read = %+v, %v", st, err)
	}
	changer := sess.(interface{ Changes() int })
	// p1 already is access 7: nothing to send.
	if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 7}}}); err != nil || changer.Changes() != 0 {
		t.Fatalf("apply of what the switch shows: %v, %d changes sent", err, changer.Changes())
	}
	if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 8}}}); err != nil || changer.Changes() != 1 {
		t.Fatalf("apply: %v, %d changes sent", err, changer.Changes())
	}
	err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "nope", Mode: fabric.ModeAccess, VLAN: 8}}})
	if err == nil || !strings.Contains(err.Error(), `no port "nope"`) {
		t.Fatalf("a missing port: %v", err)
	}
	set := shellSet()
	set.ReadCommands, set.ParseState = nil, nil
	raw, err := sshcli.Driver{Set: set, CommandTimeout: 20 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }()
	err = raw.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "bad", Mode: fabric.ModeAccess, VLAN: 8}}})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || cmdErr.Command != "no-such-command bad" || !strings.Contains(cmdErr.Output, "not found") {
		t.Fatalf("a failing command: %v, want a CommandError naming it", err)
	}
	t.Logf("as a user sees it: %v", err)
	// A name that would be shell syntax never reaches the switch.
	err = raw.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1; reboot", Mode: fabric.ModeAccess, VLAN: 8}}})
	if err == nil || !strings.Contains(err.Error(), "not a switch interface name") {
		t.Fatalf("an unsafe port name: %v", err)
	}
}

// A long command (a SONiC access list is one sonic-cfggen line) is quoted with its middle left
// out, so the host's state stays readable; its start and end, and its length, still show.
func TestCommandErrorShortensLongCommands(t *testing.T) {
	long := "sudo sonic-cfggen -a '{" + strings.Repeat("x", 5000) + "}' --write-to-db"
	msg := (&sshcli.CommandError{Switch: "leaf1", Command: long, Output: "Error: refused"}).Error()
	for _, want := range []string{"sudo sonic-cfggen -a '{xx", "(5039 characters)", "}' --write-to-db", "Error: refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if len(msg) > 400 {
		t.Errorf("message of %d characters, want a short one", len(msg))
	}
	short := (&sshcli.CommandError{Switch: "leaf1", Command: "sudo config vlan add 5", Output: "Error: x"}).Error()
	if !strings.Contains(short, `"sudo config vlan add 5"`) {
		t.Errorf("a short command is not quoted whole: %q", short)
	}
}

package measure

import (
	"os/exec"
	"testing"
)

// Children finds a child of this process by its command name, and not a process that is not
// this one's child.
func TestChildrenFindsThisProcesssChildByName(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	got := Children("sleep", "no-such-program")
	if got[cmd.Process.Pid] != "sleep" || len(got) != 1 {
		t.Fatalf("Children found %v, want only pid %d (sleep)", got, cmd.Process.Pid)
	}
	if init := Children("init", "systemd"); len(init) != 0 {
		t.Fatalf("Children found %v: not children of this process", init)
	}
}

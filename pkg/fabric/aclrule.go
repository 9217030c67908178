package fabric

import (
	"fmt"
	"net/netip"
)

// Check says what is wrong with a rule a switch driver is about to write, naming the field and
// the fix: its direction, action and protocol, and a remote that is not a CIDR or has host bits
// set (a switch shows 10.1.2.3/8 as 10.0.0.0/8, so the list would never read back as asked).
func (r ACLRule) Check() error {
	if r.Direction != DirectionIngress && r.Direction != DirectionEgress {
		return fmt.Errorf("direction %q: use ingress or egress", r.Direction)
	}
	if r.Action != ActionAllow && r.Action != ActionDeny {
		return fmt.Errorf("action %q: use allow or deny", r.Action)
	}
	if _, err := ParseProtocol(r.Protocol); err != nil {
		return err
	}
	if r.Remote == "" {
		return nil
	}
	p, err := netip.ParsePrefix(r.Remote)
	if err != nil {
		return fmt.Errorf("remote %q is not a CIDR such as 10.0.0.0/8", r.Remote)
	}
	if p.Masked() != p {
		return fmt.Errorf("remote %s has host bits set; write %s", r.Remote, p.Masked())
	}
	return nil
}

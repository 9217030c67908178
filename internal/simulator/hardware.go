package simulator

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
)

// nicModel is one kind of network card a simulated host may carry.
type nicModel struct {
	name      string
	oui       string // first three octets of the MAC: the vendor's
	model     string // PCI vendor and product IDs, as Ironic's inspector reports them
	speedGbps int64
	switchNo  int // which of the two leaf switches the port is cabled to
	fabric    bool
}

// nics are the interfaces a simulated host may have, in the order they are fitted: every host has
// the two onboard ports, and half or all of a dual-port 25G card.
var nics = []nicModel{
	{name: "eno1", oui: "3c:fd:fe", model: "0x8086 0x1521", speedGbps: 1, switchNo: 1},
	{name: "eno2", oui: "3c:fd:fe", model: "0x8086 0x1521", speedGbps: 1, switchNo: 2},
	{name: "ens1f0", oui: "b8:59:9f", model: "0x15b3 0x1015", speedGbps: 25, switchNo: 1, fabric: true},
	{name: "ens1f1", oui: "b8:59:9f", model: "0x15b3 0x1015", speedGbps: 25, switchNo: 2, fabric: true},
}

// PXEInterface is the NIC simulated hosts boot from; its MAC is spec.bootMACAddress.
const PXEInterface = "eno1"

// nicCount says how many NICs a host has: 2 to 4, stable for a host name.
func nicCount(host string) int {
	return 2 + int(digest(host, "nics")[0]%3)
}

// MAC returns the MAC address of a simulated host's NIC. It depends only on the host and NIC
// names, so a host deleted and created again keeps its addresses, as real hardware would.
func MAC(host, nic string) string {
	oui := "02:00:00"
	for _, n := range nics {
		if n.name == nic {
			oui = n.oui
		}
	}
	d := digest(host, nic)
	return fmt.Sprintf("%s:%02x:%02x:%02x", oui, d[0], d[1], d[2])
}

func digest(parts ...string) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.Join(parts, "/")))
}

// ordinal is the host's number: the N of a name ending in -N, otherwise a number derived from the
// name. It decides which switch ports the host is cabled to.
func ordinal(host string) int {
	if i := strings.LastIndexByte(host, '-'); i >= 0 {
		if n, err := strconv.Atoi(host[i+1:]); err == nil && n >= 0 {
			return n
		}
	}
	d := digest(host, "ordinal")
	return int(d[0])
}

// switchChassisID is the LLDP chassis ID of leaf switch n.
func switchChassisID(n int) string {
	return fmt.Sprintf("c8:1f:66:00:00:%02x", n)
}

// hardware returns what inspection finds on a host, as BMO writes it to status.hardware:
// NICs with MACs, speeds and LLDP neighbours, and the CPU, memory, disk and vendor fields our
// typed subset does not model (they are written unstructured and so are preserved).
// bootMAC, when set, is the PXE NIC's MAC: a host someone else registered keeps theirs.
func hardware(host, bootMAC string) map[string]any {
	ports := 24 // each leaf switch has 48 ports: onboard NICs on 1-24, fabric NICs on 25-48
	list := make([]any, 0, 4)
	for _, n := range nics[:nicCount(host)] {
		mac := MAC(host, n.name)
		if n.name == PXEInterface && bootMAC != "" {
			mac = strings.ToLower(bootMAC)
		}
		port := ordinal(host)%ports + 1
		if n.fabric {
			port += ports
		}
		list = append(list, map[string]any{
			"name":      n.name,
			"mac":       mac,
			"model":     n.model,
			"speedGbps": n.speedGbps,
			"pxe":       n.name == PXEInterface,
			"vlanId":    int64(0),
			"lldp": map[string]any{
				"switchID":         switchChassisID(n.switchNo),
				"portID":           fmt.Sprintf("Ethernet1/%d", port),
				"switchSystemName": fmt.Sprintf("leaf-%d", n.switchNo),
			},
		})
	}
	sd := digest(host, "serial")
	serial := fmt.Sprintf("S%X", sd[:5])
	return map[string]any{
		"hostname":     host,
		"nics":         list,
		"ramMebibytes": int64(196608),
		"cpu": map[string]any{
			"arch":           "x86_64",
			"model":          "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
			"clockMegahertz": int64(2100),
			"count":          int64(40),
			"flags":          []any{"avx2", "sse4_2", "vmx"},
		},
		"storage": []any{map[string]any{
			"name":         "/dev/sda",
			"model":        "SAMSUNG MZ7LH480",
			"sizeBytes":    int64(480103981056),
			"rotational":   false,
			"serialNumber": serial + "D0",
			"type":         "SSD",
		}},
		"systemVendor": map[string]any{
			"manufacturer": "Supermicro",
			"productName":  "SYS-1029P-WTR",
			"serialNumber": serial,
		},
		"firmware": map[string]any{
			"bios": map[string]any{"vendor": "American Megatrends Inc.", "version": "3.4", "date": "10/22/2020"},
		},
	}
}

// nodeUUID is the Ironic node UUID BMO would record in status.provisioning.ID: stable per host.
func nodeUUID(namespace, host string) string {
	d := digest(namespace, host, "node")
	d[6] = d[6]&0x0f | 0x50 // version 5 style: name-derived
	d[8] = d[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", d[0:4], d[4:6], d[6:8], d[8:10], d[10:16])
}

package equinixmetal

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/equinix/equinix-sdk-go/services/metalv1"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// The device events that end the OS step of a layer 2 device: the platform's own
// (network_configuration_success|failed, as CAPP's layer 2 work read them) and the user-state
// events the VLAN user-data posts to the metadata user_state_url (state succeeded, code 1001;
// failed, 1002; running, 1000), which the API lists among the device's events as type
// "user.<state>" with the message as body.
const (
	EventNetworkConfigSuccess = "network_configuration_success"
	EventNetworkConfigFailed  = "network_configuration_failed"
	userStatePrefix           = "user."
)

// eventsPerPage is how many of a device's latest events are read: the OS step's report is
// among the last few, and a device not yet reporting is asked again at the next pass.
const eventsPerPage = 50

// HostReports implements fabric.HostReporter: for each port, the latest report of its device's OS
// step (the network configuration), from the device's events, read once per device.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) HostReports(ctx context.Context, ports []string) (map[string]fabric.HostReport, error) {
	out := map[string]fabric.HostReport{}
	byDevice := map[string]*fabric.HostReport{}
	for _, name := range ports {
		dev, _, err := SplitPort(name)
		if err != nil {
			return nil, err
		}
		r, read := byDevice[dev]
		if !read {
			list, resp, err := s.api.EventsApi.FindDeviceEvents(ctx, dev).PerPage(eventsPerPage).Execute()
			if err != nil {
				return nil, apiError(fmt.Sprintf("device %s: reading its events", dev), resp, err, "")
			}
			if rep, ok := ReportOf(list.GetEvents()); ok {
				rep.Host = dev
				r = &rep
			}
			byDevice[dev] = r
		}
		if r != nil {
			out[name] = *r
		}
	}
	return out, nil
}

// ReportOf is the report the latest network configuration event of a device makes (the API lists
// events newest first); ok is false when there is none.
func ReportOf(events []metalv1.Event) (fabric.HostReport, bool) {
	for _, e := range events {
		typ := e.GetType()
		msg := cmp.Or(e.GetInterpolated(), e.GetBody(), typ)
		switch {
		case typ == EventNetworkConfigSuccess:
			return fabric.HostReport{Final: true, Message: msg}, true
		case typ == EventNetworkConfigFailed:
			return fabric.HostReport{Final: true, Failed: true, Message: msg}, true
		case strings.HasPrefix(typ, userStatePrefix):
			switch state := cmp.Or(e.GetState(), strings.TrimPrefix(typ, userStatePrefix)); state {
			case "succeeded":
				return fabric.HostReport{Final: true, Message: msg}, true
			case "failed":
				return fabric.HostReport{Final: true, Failed: true, Message: msg}, true
			case "running":
				return fabric.HostReport{Message: msg}, true
			}
		}
	}
	return fabric.HostReport{}, false
}

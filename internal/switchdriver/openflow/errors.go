package openflow

import (
	"encoding/binary"
	"fmt"

	of "antrea.io/libOpenflow/openflow15"
)

// SwitchError is an OpenFlow error message the switch sent in answer to a request.
type SwitchError struct {
	// Request names what was sent ("flow-mod add cookie=0x6d77... priority=30000 in_port=p1").
	Request string
	// Type and Code are the OFPET_* type and its code; Experimenter is set for experimenter
	// errors (Type 0xffff), whose Code is the experimenter's.
	Type, Code   uint16
	Experimenter uint32
}

func (e *SwitchError) Error() string {
	if e.Type == of.ET_EXPERIMENTER {
		return fmt.Sprintf("openflow: the switch refused %s: experimenter error %#x code %d", e.Request, e.Experimenter, e.Code)
	}
	return fmt.Sprintf("openflow: the switch refused %s: %s, %s", e.Request, errorTypeName(e.Type), errorCodeName(e.Type, e.Code))
}

// decodeError reads an error message's type and code.
func decodeError(what string, raw []byte) *SwitchError {
	e := &SwitchError{Request: what}
	if len(raw) < headerLen+4 {
		e.Type, e.Code = of.ET_BAD_REQUEST, of.BRC_BAD_LEN
		return e
	}
	e.Type, e.Code = binary.BigEndian.Uint16(raw[8:]), binary.BigEndian.Uint16(raw[10:])
	if e.Type == of.ET_EXPERIMENTER && len(raw) >= headerLen+8 {
		e.Experimenter = binary.BigEndian.Uint32(raw[12:])
	}
	return e
}

// Names as the OpenFlow 1.5 specification writes them.
var errorTypes = []string{
	"OFPET_HELLO_FAILED", "OFPET_BAD_REQUEST", "OFPET_BAD_ACTION", "OFPET_BAD_INSTRUCTION",
	"OFPET_BAD_MATCH", "OFPET_FLOW_MOD_FAILED", "OFPET_GROUP_MOD_FAILED", "OFPET_PORT_MOD_FAILED",
	"OFPET_TABLE_MOD_FAILED", "OFPET_QUEUE_OP_FAILED", "OFPET_SWITCH_CONFIG_FAILED",
	"OFPET_ROLE_REQUEST_FAILED", "OFPET_METER_MOD_FAILED", "OFPET_TABLE_FEATURES_FAILED",
	"OFPET_BAD_PROPERTY", "OFPET_ASYNC_CONFIG_FAILED", "OFPET_FLOW_MONITOR_FAILED",
	"OFPET_BUNDLE_FAILED",
}

// errorCodes are the codes of the error types this client can provoke.
var errorCodes = map[uint16][]string{
	of.ET_HELLO_FAILED: {"OFPHFC_INCOMPATIBLE", "OFPHFC_EPERM"},
	of.ET_BAD_REQUEST: {"OFPBRC_BAD_VERSION", "OFPBRC_BAD_TYPE", "OFPBRC_BAD_MULTIPART",
		"OFPBRC_BAD_EXPERIMENTER", "OFPBRC_BAD_EXP_TYPE", "OFPBRC_EPERM", "OFPBRC_BAD_LEN",
		"OFPBRC_BUFFER_EMPTY", "OFPBRC_BUFFER_UNKNOWN", "OFPBRC_BAD_TABLE_ID", "OFPBRC_IS_SLAVE",
		"OFPBRC_BAD_PORT", "OFPBRC_BAD_PACKET", "OFPBRC_MULTIPART_BUFFER_OVERFLOW"},
	of.ET_BAD_ACTION: {"OFPBAC_BAD_TYPE", "OFPBAC_BAD_LEN", "OFPBAC_BAD_EXPERIMENTER",
		"OFPBAC_BAD_EXP_TYPE", "OFPBAC_BAD_OUT_PORT", "OFPBAC_BAD_ARGUMENT", "OFPBAC_EPERM",
		"OFPBAC_TOO_MANY", "OFPBAC_BAD_QUEUE", "OFPBAC_BAD_OUT_GROUP", "OFPBAC_MATCH_INCONSISTENT"},
	of.ET_BAD_INSTRUCTION: {"OFPBIC_UNKNOWN_INST", "OFPBIC_UNSUP_INST", "OFPBIC_BAD_TABLE_ID",
		"OFPBIC_UNSUP_METADATA", "OFPBIC_UNSUP_METADATA_MASK", "OFPBIC_BAD_EXPERIMENTER",
		"OFPBIC_BAD_EXP_TYPE", "OFPBIC_BAD_LEN", "OFPBIC_EPERM", "OFPBIC_DUP_INST"},
	of.PET_BAD_MATCH: {"OFPBMC_BAD_TYPE", "OFPBMC_BAD_LEN", "OFPBMC_BAD_TAG",
		"OFPBMC_BAD_DL_ADDR_MASK", "OFPBMC_BAD_NW_ADDR_MASK", "OFPBMC_BAD_WILDCARDS",
		"OFPBMC_BAD_FIELD", "OFPBMC_BAD_VALUE", "OFPBMC_BAD_MASK", "OFPBMC_BAD_PREREQ",
		"OFPBMC_DUP_FIELD", "OFPBMC_EPERM"},
	of.ET_FLOW_MOD_FAILED: {"OFPFMFC_UNKNOWN", "OFPFMFC_TABLE_FULL", "OFPFMFC_BAD_TABLE_ID",
		"OFPFMFC_OVERLAP", "OFPFMFC_EPERM", "OFPFMFC_BAD_TIMEOUT", "OFPFMFC_BAD_COMMAND",
		"OFPFMFC_BAD_FLAGS", "OFPFMFC_CANT_SYNC", "OFPFMFC_BAD_PRIORITY", "OFPFMFC_IS_SYNC"},
	of.ET_PORT_MOD_FAILED: {"OFPPMFC_BAD_PORT", "OFPPMFC_BAD_HW_ADDR", "OFPPMFC_BAD_CONFIG",
		"OFPPMFC_BAD_ADVERTISE", "OFPPMFC_EPERM"},
	of.ET_BUNDLE_FAILED: {"OFPBFC_UNKNOWN", "OFPBFC_EPERM", "OFPBFC_BAD_ID", "OFPBFC_BUNDLE_EXIST",
		"OFPBFC_BUNDLE_CLOSED", "OFPBFC_OUT_OF_BUNDLES", "OFPBFC_BAD_TYPE", "OFPBFC_BAD_FLAGS",
		"OFPBFC_MSG_BAD_LEN", "OFPBFC_MSG_BAD_XID", "OFPBFC_MSG_UNSUP", "OFPBFC_MSG_CONFLICT",
		"OFPBFC_MSG_TOO_MANY", "OFPBFC_MSG_FAILED", "OFPBFC_TIMEOUT", "OFPBFC_BUNDLE_IN_PROGRESS"},
}

func errorTypeName(t uint16) string {
	if int(t) < len(errorTypes) {
		return fmt.Sprintf("%s (%d)", errorTypes[t], t)
	}
	return fmt.Sprintf("error type %d", t)
}

func errorCodeName(t, c uint16) string {
	if names := errorCodes[t]; int(c) < len(names) {
		return fmt.Sprintf("%s (%d)", names[c], c)
	}
	return fmt.Sprintf("code %d", c)
}

#!/bin/sh
# Generates zz_generated.oc.go with ygot v0.36.0 from the OpenConfig YANG modules ygot v0.36.0 carries and
# metalwire-network-instance.yang, metalwire-acl.yang and metalwire-lacp.yang (run by go generate in this folder).
set -e
yang="$(go env GOMODCACHE)/github.com/openconfig/ygot@v0.36.0/demo/getting_started/yang"
go mod download github.com/openconfig/ygot@v0.36.0
go run github.com/openconfig/ygot/generator@v0.36.0 -path="$yang,." -output_file=zz_generated.oc.go -package_name=oc \
	-generate_fakeroot -fakeroot_name=device -compress_paths=false -generate_getters -exclude_modules=ietf-interfaces \
	"$yang/openconfig-interfaces.yang" "$yang/openconfig-if-ethernet.yang" "$yang/openconfig-vlan.yang" \
	metalwire-network-instance.yang metalwire-acl.yang metalwire-lacp.yang
gofmt -w zz_generated.oc.go

# metalwire — `make help` lists every target.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
BIN  := $(ROOT)/bin

# Tool versions. kube-apiserver and etcd versions come from hack/tools/go.mod, which builds them;
# internal/controlplane derives the same directory from the same file.
KUBE_VERSION           := $(shell awk '$$1=="k8s.io/kubernetes"{print $$2; exit}' hack/tools/go.mod)
ETCD_VERSION           := $(shell awk '$$1=="go.etcd.io/etcd/server/v3"{print $$2; exit}' hack/tools/go.mod)
CONTROLLER_GEN_VERSION := v0.23.0
GOLANGCI_LINT_VERSION  := v2.15.0

CONTROL_PLANE_DIR := $(BIN)/control-plane/kube-$(KUBE_VERSION)-etcd-$(ETCD_VERSION)
KUBE_APISERVER    := $(CONTROL_PLANE_DIR)/kube-apiserver
ETCD              := $(CONTROL_PLANE_DIR)/etcd
CONTROLLER_GEN    := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT     := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/metalwire/metalwire/internal/version.Version=$(VERSION)

# Packages run by `make test`. test/scale holds benchmarks only (make bench-*).
TEST_PKGS ?= ./...
GOTEST_FLAGS ?= -count=1 -timeout=40m

##@ General

.PHONY: help
help: ## List every target with what it does.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
	  /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Tools

.PHONY: tools
tools: $(KUBE_APISERVER) $(ETCD) $(CONTROLLER_GEN) $(GOLANGCI_LINT) ## Build kube-apiserver, etcd, controller-gen and golangci-lint into bin/ (skipped when present).

$(KUBE_APISERVER):
	hack/tools/build.sh kube-apiserver $@
$(ETCD):
	hack/tools/build.sh etcd $@
$(CONTROLLER_GEN):
	hack/tools/build.sh controller-gen@$(CONTROLLER_GEN_VERSION) $@
$(GOLANGCI_LINT):
	hack/tools/build.sh golangci-lint@$(GOLANGCI_LINT_VERSION) $@

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code and CRDs from the API types.
	@mkdir -p config/crd/bases config/crd/dev config/rbac
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:dir=config/crd/bases
	@# BMO installs the real BareMetalHost CRD; ours is for tests and dev mode only.
	mv config/crd/bases/metal3.io_*.yaml config/crd/dev/
	@# A NIC's status.nics holds null for an unused card (the seed's shape); controller-gen has
	@# no marker for nullable list items, so the schema gets it here.
	sed -i -E 's/^( *)(description: NICAssignment is the network a card carries\.)$$/\1\2\n\1nullable: true/' config/crd/bases/network.metalwire.io_nics.yaml
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./internal/controller/... output:rbac:dir=config/rbac

.PHONY: build
build: ## Build bin/metalwire and bin/metalwire-capi (Cluster API's controllers, which dev mode starts beside it).
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/metalwire ./cmd/metalwire
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/metalwire-capi ./cmd/metalwire-capi

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run go vet and golangci-lint.
	go vet ./...
	$(GOLANGCI_LINT) run ./...

.PHONY: test
test: $(KUBE_APISERVER) $(ETCD) $(CONTROLLER_GEN) test-deps ## Run every test (builds the control plane and controller-gen on first run).
	go test $(GOTEST_FLAGS) $(TEST_PKGS)

# Ironic's network_data.json schema, from Debian's python3-ironic: unpacked, not installed (none of
# Ironic's dependencies are needed to read one JSON file). internal/schematest reads it from here.
IRONIC_DEB_DIR := $(BIN)/debian/python3-ironic
IRONIC_SCHEMA  := $(IRONIC_DEB_DIR)/usr/lib/python3/dist-packages/ironic/api/controllers/v1/network-data-schema.json

.PHONY: test-deps
test-deps: $(IRONIC_SCHEMA) ## Install what tests feed or drive when missing: cloud-init, netplan.io, curl, graphviz, Open vSwitch, sshd (Debian packages); Ironic's schema into bin/.
	@command -v cloud-init >/dev/null || (apt-get update && apt-get install -y --no-install-recommends cloud-init)
	@command -v netplan >/dev/null || (apt-get update && apt-get install -y --no-install-recommends netplan.io)
	@# The VLAN user-data script runs in a test (pkg/render/l2userdata): it reads the metadata with curl.
	@command -v curl >/dev/null || (apt-get update && apt-get install -y --no-install-recommends curl)
	@# metalwire fabric show --format svg draws with Graphviz's dot.
	@command -v dot >/dev/null || (apt-get update && apt-get install -y --no-install-recommends graphviz)
	@# Switch driver tests: user-space Open vSwitch in network namespaces, driven over OVSDB and SSH.
	@(command -v ovs-vswitchd && command -v sshd && command -v ip && command -v ping) >/dev/null || \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openvswitch-switch openssh-server iproute2 iputils-ping)
	@# TCP through user-space Open vSwitch needs the hosts' checksum offload off (ovstest.ListenTCP).
	@command -v ethtool >/dev/null || (apt-get update && apt-get install -y --no-install-recommends ethtool)
	@# The manager image's CA certificates (hack/image).
	@test -f /etc/ssl/certs/ca-certificates.crt || (apt-get update && apt-get install -y --no-install-recommends ca-certificates)

$(IRONIC_SCHEMA):
	@rm -rf $(IRONIC_DEB_DIR).tmp && mkdir -p $(IRONIC_DEB_DIR).tmp
	cd $(IRONIC_DEB_DIR).tmp && (apt-get download python3-ironic || (apt-get update && apt-get download python3-ironic))
	dpkg-deb -x $(IRONIC_DEB_DIR).tmp/python3-ironic_*.deb $(IRONIC_DEB_DIR).tmp/root
	@rm -rf $(IRONIC_DEB_DIR) && mv $(IRONIC_DEB_DIR).tmp/root $(IRONIC_DEB_DIR) && rm -rf $(IRONIC_DEB_DIR).tmp
	@test -f $@ || (echo "python3-ironic has no $@; the package moved its schema" >&2; exit 1)

##@ Release

MANAGER_PKG   ?= ./cmd/manager
IMAGE         ?= ghcr.io/metalwire/manager:$(VERSION)
RELEASE_DIR   ?= out/release
IMAGE_DIR     ?= out/image
REVISION      := $(shell git rev-parse HEAD 2>/dev/null)
# Every timestamp in the image; the last commit's time makes the same commit give the same digest.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: image
image: ## Build the manager image without Docker: OCI layout in out/image, docker-load tarball out/metalwire-image.tar (IMAGE=ref).
	@mkdir -p out
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS) -s -w' -o out/manager $(MANAGER_PKG)
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) go run ./hack/image --binary out/manager --out $(IMAGE_DIR) --tar out/metalwire-image.tar \
	  --tag $(IMAGE) --version $(VERSION) --revision $(REVISION)

.PHONY: release-manifests
release-manifests: ## Write clusterctl's infrastructure-components.yaml, metadata.yaml and cluster-template.yaml to out/release.
	go run ./hack/release --out $(RELEASE_DIR) --image $(IMAGE)

##@ Benchmarks

.PHONY: bench-ipam
bench-ipam: $(KUBE_APISERVER) $(ETCD) ## IPAM scale: time to serve 500, 2,000 and 10,000 claims from one /16 pool (IPAM_SCALE_SIZES=... to change), beside its floors; IPAM_SCALE_WATCHED_FLOOR=1 adds the writes alone with a controller's watches; BENCH_CACHE_CHECKS=on runs every API server with its cache consistency checker (off by default: it comes by the clock, not by the write).
	METALWIRE_SCALE=1 go test ./test/scale -run 'TestIPAMScale$$' -count=1 -v -timeout 60m

# Sizes (machines) of make bench-data, and the timeout of a benchmark's go test: a run at
# 10,000 machines (floor, default and generous limits) takes most of an hour on an idle machine.
BENCH_DATA_SIZES ?= 1000,5000
BENCH_TIMEOUT    ?= 240m

.PHONY: bench-data
bench-data: $(KUBE_APISERVER) $(ETCD) ## Data templating at scale: BENCH_DATA_SIZES machines (1000,5000; 10000 works), one template, two pools, served by the image's manager (--controllers=infrastructure,ipam); the floor beside each size (BENCH_DATA_FLOOR=0 skips it), default and generous client limits (BENCH_DATA_LIMITS); prints time, ratio to the floor, writes, watch KiB, manager CPU ms and peak KiB per machine; BENCH_DATA_HEAP_PROFILE=dir writes and summarises the manager's heap profile; BENCH_DATA_WATCHED_FLOOR=1 adds the floor with a controller's watches; BENCH_DATA_FLOOR_AFTER=1 measures the floor again after the runs (the machine's speed may have moved) and prints each run's ratio to both and to their mean; BENCH_CACHE_CHECKS=on runs floor and runs with the API server's cache consistency checker (off by default: it comes by the API server's age, so it fell in runs and not in floors); BENCH_MEMORY_LIMIT=250Mi runs the manager in a memory cgroup of that size, as a container with that limit (root).
	METALWIRE_SCALE=1 BENCH_DATA_SIZES=$(BENCH_DATA_SIZES) go test ./test/scale/data -run 'TestDataScale$$' -count=1 -timeout $(BENCH_TIMEOUT) -v

.PHONY: bench-growth
bench-growth: $(KUBE_APISERVER) $(ETCD) ## Growth with size: bench-data at 1,000, 5,000 and 10,000 machines (floor and default limits), then the growth of time (beside the floor's own), peak memory and watch bytes per machine between sizes. Hours; idle machine only.
	METALWIRE_SCALE=1 BENCH_DATA_SIZES=1000,5000,10000 BENCH_DATA_LIMITS=$${BENCH_DATA_LIMITS:-default} go test ./test/scale/data -run 'TestDataScale$$' -count=1 -timeout $(BENCH_TIMEOUT) -v

# Metal3Machines (and hosts) in make bench-machine.
BENCH_MACHINE_N ?= 1000

.PHONY: bench-machine
bench-machine: $(KUBE_APISERVER) $(ETCD) ## Machine association at scale: BENCH_MACHINE_N (default 1000; 10000 works) Metal3Machines with overlapping selectors, beside its floor; prints time, machines served vs a maximum matching, writes, watch KiB, manager CPU ms and peak KiB per machine, with default and generous client limits; BENCH_MACHINE_HEAP_PROFILE=dir writes the manager's heap profiles.
	METALWIRE_SCALE=1 BENCH_MACHINE_N=$(BENCH_MACHINE_N) go test ./test/scale/machine -run 'TestMachineScale$$' -count=1 -timeout $(BENCH_TIMEOUT) -v

.PHONY: bench-fabric-drivers
bench-fabric-drivers: test-deps ## Switch driver alone: FABRIC_BENCH_SWITCHES (20) ovsdb-servers of FABRIC_BENCH_PORTS (100) ports, one batch each at once, then again; prints time and transactions per switch.
	METALWIRE_BENCH=1 go test ./internal/switchdriver/openvswitch -run 'TestBenchFabricDrivers$$' -count=1 -timeout 20m -v

.PHONY: bench-fabric-ssh
bench-fabric-ssh: $(KUBE_APISERVER) $(ETCD) ## SSH fabric at scale: FABRIC_SSH_BENCH_HOSTS (1000) hosts x 2 NICs on FABRIC_SSH_BENCH_SWITCHES (20) emulated EOS switches (login 1 s, 20 ms a command) join at once through the image's manager (FABRIC_SSH_BENCH_CONCURRENCY, default the manager's --fabric-concurrency, switches at once); prints time to ready, logins and commands per switch, manager CPU and memory, and networking-generic-switch's one-login-per-port way as the anchor.
	METALWIRE_SCALE=1 go test ./test/scale/fabricssh -run 'TestFabricSSHScale$$' -count=1 -timeout 60m -v

.PHONY: bench-fabric
bench-fabric: $(KUBE_APISERVER) $(ETCD) test-deps ## Fabric at scale: FABRIC_BENCH_HOSTS (1000) hosts x 2 NICs on FABRIC_BENCH_SWITCHES (20) ovsdb-servers join a ClusterNetwork at once (FABRIC_BENCH_LAG=1: each host's two cards one LACP bond; FABRIC_BENCH_ACL=1: a two-rule access list on each network, as OpenFlow flows, with an ovs-vswitchd per switch; both: issue 25's run; FABRIC_BENCH_VSWITCHD=1: an ovs-vswitchd per switch without lists too, part 1 on the same switches); prints time to ready, transactions per switch (with ACL: transactions and OpenFlow bundles, and the flows at the end), manager CPU and memory.
	METALWIRE_SCALE=1 go test ./test/scale/fabric -run 'TestFabricScale$$' -count=1 -timeout 30m -v

CHAOS_N     ?= 1000
CHAOS_KILLS ?= 10

.PHONY: chaos
chaos: $(KUBE_APISERVER) $(ETCD) ## Faults at scale: CHAOS_N machines' data (1000) with the manager SIGKILLed CHAOS_KILLS times (10), the API server restarted, the leader killed, a scale-up undone; prints times and the takeover.
	CHAOS_N=$(CHAOS_N) CHAOS_KILLS=$(CHAOS_KILLS) go test ./test/chaos -count=1 -timeout 120m -v

##@ Running

.PHONY: demo
demo: $(KUBE_APISERVER) $(ETCD) build ## Run examples/ on simulated hosts until every host is provisioned, print the hosts and a picture of the fabric, stop (DEMO_FLAGS="--timeout 10m").
	@command -v dot >/dev/null || (apt-get update && apt-get install -y --no-install-recommends graphviz)
	$(BIN)/metalwire demo --no-build $(DEMO_FLAGS)

.PHONY: dev
dev: build ## Run the whole system locally with simulated hosts until Ctrl-C (DEV_FLAGS="--hosts 5 --apply dir/").
	$(BIN)/metalwire dev $(DEV_FLAGS)

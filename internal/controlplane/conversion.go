package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/metalwire/metalwire/internal/webhooks"
)

// Every Env installs metalwire's CRDs with their conversion webhook pointing at
// Env.Webhooks (envtest does that for each kind its scheme can convert), but only an Env started
// with Options.ServeConversion answers there. Without it, v1beta2 (stored) works as always and a
// request for CAPM3's v1beta1 fails: tests that never touch v1beta1 start no server.

// serveConversion runs a manager with nothing but the conversion webhooks, as the real manager
// registers them, on the address and certificate the CRDs name.
func (e *Env) serveConversion() error {
	hooks := e.Webhooks
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    hooks.LocalServingHost,
			Port:    hooks.LocalServingPort,
			CertDir: hooks.LocalServingCertDir,
		}),
	})
	if err != nil {
		return fmt.Errorf("controlplane: conversion webhook server: %w", err)
	}
	if err := webhooks.SetupConversion(mgr); err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.stopConversion = func() error {
		cancel()
		return <-done
	}
	check := mgr.GetWebhookServer().StartedChecker()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return check(nil) == nil, nil
	})
	if err != nil {
		return errors.Join(errors.New("controlplane: the conversion webhook server did not start within a minute"), e.stopConversion())
	}
	return nil
}

// Package webhooks registers metalwire's webhooks with a manager's webhook server: today the
// conversion webhooks that serve CAPM3's v1beta1 of every infrastructure kind beside v1beta2.
package webhooks

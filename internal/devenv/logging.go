package devenv

import (
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger sends every controller's log, Cluster API's klog output included, to w: the terminal
// is kept for the progress lines a person follows.
func newLogger(w io.Writer) logr.Logger {
	log := zap.New(zap.WriteTo(w), zap.UseDevMode(false))
	klog.SetLogger(log)
	return log
}

package testenv

import (
	"os"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Logger returns a development logger writing to stderr: errors only, unless
// RUDDER_TEST_VERBOSE is set, then everything down to debug.
func Logger() logr.Logger {
	level := zapcore.ErrorLevel
	if os.Getenv("RUDDER_TEST_VERBOSE") != "" {
		level = zapcore.DebugLevel
	}
	return zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(level))
}

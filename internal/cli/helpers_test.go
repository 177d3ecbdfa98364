package cli

import "go.uber.org/zap/zapcore"

// zapLevelQuiet keeps the manager's logs to errors during the tests.
const zapLevelQuiet = zapcore.ErrorLevel

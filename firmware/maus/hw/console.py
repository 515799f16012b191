# The console's rate (docs/protocol.md, `baud`): loaded for a switch and let go again (maus.moment), so
# neither a game nor the board's hardware layer (maus.hw.esp32, which a game holds) carries this code.
#
# On an ESP32 the console is UART0, the REPL's. MicroPython v1.28.0, ports/esp32/machine_uart.c: machine.UART(0)
# is that UART (uart_is_repl); the REPL drives it through the HAL with its own ISR (ports/esp32/uart.c), so no
# ESP-IDF driver is installed for it, and mp_machine_uart_init_helper leaves its buffers and pins alone and sets
# the divisor with uart_set_baudrate. Its last step, uart_flush_input, needs such a driver and fails (OSError,
# and ESP-IDF logs one `E (...) uart:` line): the rate is set by then. The REPL's writes (uart_stdout_tx_strn)
# return once the bytes are in the 128-byte TX FIFO, and init waits for nothing on the REPL's UART
# (uart_wait_tx_done only with a driver), so the FIFO's time at the old rate is waited out first.
from micropython import const

BOOT_BAUD = const(115200)  # the REPL UART's rate from power-on (ports/esp32/uart.c, uart_stdout_init)
_TX_FIFO = const(128)  # bytes UART0's transmit FIFO holds (SOC_UART_FIFO_LEN)


def switch(hw, rate):
    """The console UART to `rate`, once the bytes written before have left. Main loop only, never an IRQ; on a
    board it allocates the UART object and its error (about 150 bytes, once per switch, outside games). The virtual
    unit runs the same (its machine.UART(0), host/mausbox/sim/vumachine.py); the tests' stand-ins model their line
    themselves (hw.console_baud)."""
    old = getattr(hw, "baud", BOOT_BAUD)
    if rate == old:
        return
    hw.baud = rate
    fn = getattr(hw, "console_baud", None)
    if fn is not None:
        fn(rate)
        return
    import time

    import machine

    uart = getattr(machine, "UART", None)  # the virtual unit's machine has UART(0) too (its bridge's line)
    if uart is None:
        return  # the unix port's own machine (a scenario in virtual time): no line to set
    time.sleep_ms(_TX_FIFO * 10000 // old + 2)  # a full FIFO at the old rate, 10 bits a byte
    try:
        uart(0, rate)
    except OSError:
        pass  # uart_flush_input, after uart_set_baudrate (above)

"""The real-time control channel of the virtual unit: bad lines are reported and ignored, never fatal."""


from conftest import run_micropython


def test_bad_control_lines_do_not_stop_the_unit(tmp_path):
    script = tmp_path / "ctl.py"
    script.write_text(
        "import json\n"
        "from maus.sim import hw as sim\n"
        "b = {'name': 'sim', 'family': 'sim', 'players': 2, 'buttons': [0, 1], 'parts': {}}\n"
        "hw = sim.Hardware(b)\n"
        "for act in ({'press': 9}, {'press': 'x'}, {'release': 0}, {'hold': 1, 'ms': 'long'}, {'press': 2}):\n"
        "    try:\n"
        "        hw.apply(act)\n"
        "        print('applied', json.dumps(act))\n"
        "    except (ValueError, TypeError):\n"
        "        print('refused', json.dumps(act))\n"
        "print('level2', hw.buttons[1].value())\n")
    proc = run_micropython(script, heapsize="256k")
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert out.count("refused") == 4 and 'applied {"press": 2}' in out and "level2 0" in out

import { describe, expect, it } from "vitest";
import { UsageCalibration } from "../../src/model/usage-calibration.js";

describe("UsageCalibration", () => {
  it("leaves estimates alone until the provider reported usage", () => {
    const calibration = new UsageCalibration();
    expect(calibration.ratio).toBe(1);
    expect(calibration.apply(1_000)).toBe(1_000);
  });

  it("scales later estimates by reported / estimated input tokens", () => {
    const calibration = new UsageCalibration();
    calibration.observe(1_000, 1_250);
    expect(calibration.ratio).toBe(1.25);
    expect(calibration.apply(2_000)).toBe(2_500);
    expect(calibration.apply(3)).toBe(4);
  });

  it("follows the latest report", () => {
    const calibration = new UsageCalibration();
    calibration.observe(1_000, 1_500);
    calibration.observe(1_000, 900);
    expect(calibration.ratio).toBe(0.9);
  });

  it("clamps the ratio to [0.5, 2]", () => {
    const calibration = new UsageCalibration();
    calibration.observe(100, 1_000);
    expect(calibration.ratio).toBe(2);
    calibration.observe(1_000, 10);
    expect(calibration.ratio).toBe(0.5);
  });

  it("ignores reports it cannot use", () => {
    const calibration = new UsageCalibration();
    calibration.observe(1_000, 1_100);
    calibration.observe(0, 500);
    calibration.observe(500, 0);
    calibration.observe(Number.NaN, 10);
    calibration.observe(10, Number.POSITIVE_INFINITY);
    expect(calibration.ratio).toBe(1.1);
  });
});

# Collision Response preset "Flesh": elastic with bulging: swells around the press, springs back.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.2
settings.standoff = 0.0
settings.recovers = True
settings.profiles = {
    "absorption": [0.0, -0.35, 0.3, 0.5],
    "response_time": [0.06],
    "time_to_rest": [0.6],
    "damping_ratio": [1.0],
    "overshoot_period": [0.5],
    "yield_limit": [1.0],
}

# Collision Response preset "Soft Clay": plastic and local: keeps every dent.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.3
settings.standoff = 0.0
settings.recovers = False  # dents never spring back
settings.profiles = {
    "absorption": [0.0, 0.0, 0.1, 0.3],
    "response_time": [0.05],
    "time_to_rest": [1.0],
    "damping_ratio": [1.0],
    "overshoot_period": [0.5],
    "yield_limit": [0.0],
}
